//! Role keys: decoding and validating `rk2.` wires (issue 4).
