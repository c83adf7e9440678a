"""The raw-socket resource strings labctl reads itself."""

from __future__ import annotations

from labctl.instruments.address import tcp_socket


def test_a_socket_resource_is_read_in_any_spelling_and_other_resources_are_not():
    assert tcp_socket(" TCPIP0::127.0.0.1::5025::SOCKET ") == ("TCPIP0", "127.0.0.1", 5025)
    assert tcp_socket("tcpip::lab-psu.local::50251::socket") == ("tcpip", "lab-psu.local", 50251)
    assert tcp_socket("TCPIP0::127.0.0.1::5025::SOCKET").with_port(6000) == "TCPIP0::127.0.0.1::6000::SOCKET"
    for other in ("TCPIP0::10.0.0.2::inst0::INSTR", "ASRL/dev/ttyUSB0::INSTR", "/dev/ttyUSB0", "USB0::0x2A8D::INSTR",
                  "TCPIP0::127.0.0.1::port::SOCKET"):
        assert tcp_socket(other) is None, other
