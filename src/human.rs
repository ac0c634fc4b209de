//! Human-in-the-loop requests.
