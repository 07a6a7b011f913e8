"""The bank's one error type, shared by every table family."""


class BankError(RuntimeError):
    """A bank that cannot be opened or used; the message is one sentence."""
