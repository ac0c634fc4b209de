//! Sweeps and statistics.
