/* The DPDK headers railyard binds, plus out-of-line copies of the
 * `static inline` fast-path functions bindgen cannot see as symbols.
 * Compiled by build.rs (shim.c) with the flags of `pkg-config --cflags libdpdk`. */
#ifndef RY_DPDK_SHIM_H
#define RY_DPDK_SHIM_H

#include <rte_config.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_eth_ring.h>

uint16_t ry_rte_eth_rx_burst(uint16_t port_id, uint16_t queue_id,
                             struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t ry_rte_eth_tx_burst(uint16_t port_id, uint16_t queue_id,
                             struct rte_mbuf **tx_pkts, uint16_t nb_pkts);

struct rte_mbuf *ry_rte_pktmbuf_alloc(struct rte_mempool *mp);
int ry_rte_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **mbufs,
                              unsigned int count);
void ry_rte_pktmbuf_free(struct rte_mbuf *m);
void ry_rte_pktmbuf_free_bulk(struct rte_mbuf **mbufs, unsigned int count);
/* Start of the first segment's data (rte_pktmbuf_mtod). */
void *ry_rte_pktmbuf_mtod(struct rte_mbuf *m);
uint16_t ry_rte_pktmbuf_data_len(const struct rte_mbuf *m);
uint32_t ry_rte_pktmbuf_pkt_len(const struct rte_mbuf *m);
/* The next segment of a chained mbuf, or NULL. */
struct rte_mbuf *ry_rte_pktmbuf_next(const struct rte_mbuf *m);
/* Bytes the first segment can still take after its data. */
uint16_t ry_rte_pktmbuf_tailroom(const struct rte_mbuf *m);
/* Sets the length of a single-segment mbuf (data_len = pkt_len = len). */
void ry_rte_pktmbuf_set_len(struct rte_mbuf *m, uint16_t len);
unsigned int ry_rte_lcore_id(void);
int ry_rte_errno(void);
/* The numeric value of RTE_MAX_ETHPORTS etc. as seen by this build. */
unsigned int ry_rte_max_ethports(void);

unsigned int ry_rte_ring_enqueue_burst(struct rte_ring *r, void *const *objs,
                                       unsigned int n);
unsigned int ry_rte_ring_dequeue_burst(struct rte_ring *r, void **objs,
                                       unsigned int n);
unsigned int ry_rte_ring_count(const struct rte_ring *r);

#endif
