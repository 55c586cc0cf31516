"""Who may send commands (desks, operators, their bearer tokens) and the fixtures desks score."""
