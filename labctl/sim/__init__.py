"""The simulated lab: real instruments' SCPI over real sockets and serial ports (ptys),
one physics model of a virtual accelerator board behind them.

Nothing here imports the engine: the simulated lab is a lab on the other side of a socket.
"""
