//! Reflexion memory (issue 3).
