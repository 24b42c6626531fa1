"""Memory: the analytical miss-rate model (``model``, Suh, Rudolph & Devadas eqs. 1-4 and
the fluctuation extension) and the exact LRU simulator it is checked against (``lru``).
The model never imports a simulator."""
