//! Role registry (issue 4).
