//! Ring and all-to-all schedules as a transport-free engine (in progress).
