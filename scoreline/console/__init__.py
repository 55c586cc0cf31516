"""What the operator console reads: every match at a glance, and the desks of a match."""
