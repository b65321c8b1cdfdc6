"""Models: machine-learning training problems declared once (LP, QP, MIQP)."""
