//! Assign jobs (issue 3): createAssign, getAssign, updateAssignStatus, listAssigns, retryAssign.
