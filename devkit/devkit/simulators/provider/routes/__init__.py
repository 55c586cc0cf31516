"""The simulator's HTTP routes: the SportMonks data API, the `/_sim` controls, and health."""
