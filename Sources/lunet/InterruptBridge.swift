import CLunetLua

/// Called from the SIGINT handler: only sets an async-signal-safe flag.
@inline(__always)
func lunet_interrupt_request_from_signal() { lunet_interrupt_request() }
