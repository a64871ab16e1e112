"""Deep linear networks: the model and its dynamics (Notebooks 04 and 05)."""
