/* Out-of-line wrappers for DPDK's static inline functions; see shim.h. */
#include "shim.h"

uint16_t ry_rte_eth_rx_burst(uint16_t port_id, uint16_t queue_id,
                             struct rte_mbuf **rx_pkts, uint16_t nb_pkts)
{
	return rte_eth_rx_burst(port_id, queue_id, rx_pkts, nb_pkts);
}

uint16_t ry_rte_eth_tx_burst(uint16_t port_id, uint16_t queue_id,
                             struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{
	return rte_eth_tx_burst(port_id, queue_id, tx_pkts, nb_pkts);
}

struct rte_mbuf *ry_rte_pktmbuf_alloc(struct rte_mempool *mp)
{
	return rte_pktmbuf_alloc(mp);
}

int ry_rte_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **mbufs,
                              unsigned int count)
{
	return rte_pktmbuf_alloc_bulk(mp, mbufs, count);
}

void ry_rte_pktmbuf_free(struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
}

void ry_rte_pktmbuf_free_bulk(struct rte_mbuf **mbufs, unsigned int count)
{
	rte_pktmbuf_free_bulk(mbufs, count);
}

void *ry_rte_pktmbuf_mtod(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, void *);
}

uint16_t ry_rte_pktmbuf_data_len(const struct rte_mbuf *m)
{
	return rte_pktmbuf_data_len(m);
}

uint32_t ry_rte_pktmbuf_pkt_len(const struct rte_mbuf *m)
{
	return rte_pktmbuf_pkt_len(m);
}

struct rte_mbuf *ry_rte_pktmbuf_next(const struct rte_mbuf *m)
{
	return m->next;
}

uint16_t ry_rte_pktmbuf_tailroom(const struct rte_mbuf *m)
{
	return rte_pktmbuf_tailroom(m);
}

void ry_rte_pktmbuf_set_len(struct rte_mbuf *m, uint16_t len)
{
	m->data_len = len;
	m->pkt_len = len;
}

unsigned int ry_rte_lcore_id(void)
{
	return rte_lcore_id();
}

int ry_rte_errno(void)
{
	return rte_errno;
}

unsigned int ry_rte_max_ethports(void)
{
	return RTE_MAX_ETHPORTS;
}

unsigned int ry_rte_ring_enqueue_burst(struct rte_ring *r, void *const *objs,
                                       unsigned int n)
{
	return rte_ring_enqueue_burst(r, objs, n, NULL);
}

unsigned int ry_rte_ring_dequeue_burst(struct rte_ring *r, void **objs,
                                       unsigned int n)
{
	return rte_ring_dequeue_burst(r, objs, n, NULL);
}

unsigned int ry_rte_ring_count(const struct rte_ring *r)
{
	return rte_ring_count(r);
}
