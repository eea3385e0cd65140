"""The exceptions of the package. Every refusal is an MlaError carrying a Status, whether the
library returned it or the binding refused the input before calling the library (an array of
the wrong kind, shape or placement). The binding's own refusals are also ValueError or
TypeError, so code written against either keeps working."""
from ._abi import Status


class MlaError(RuntimeError):
    """A libmla_decode call returned a status other than SUCCESS, or the binding refused the
    input with the status the library gives for such input.

    status: the Status (an int when the library returned a value this package does not know);
    status_name: the library's name of it ("MLA_STATUS_UNSUPPORTED"); message: the library's
    message (mla_last_error_message) or the binding's; function: the C function that failed, or
    "python binding" for a refusal before any library call."""

    def __init__(self, status, status_name, message, function):
        try:
            status = Status(status)
        except ValueError:
            pass
        self.status, self.status_name, self.message, self.function = (status, status_name,
                                                                      message, function)
        super().__init__("%s: %s: %s" % (function, status_name, message))


BINDING = "python binding"


class MlaValueError(MlaError, ValueError):
    """The binding refused a value, shape or placement (status INVALID_VALUE unless stated)."""

    def __init__(self, message, status=Status.INVALID_VALUE):
        super().__init__(status, "MLA_STATUS_" + Status(status).name, message, BINDING)


class MlaTypeError(MlaError, TypeError):
    """The binding refused an element type or object kind (status INVALID_DTYPE unless
    stated)."""

    def __init__(self, message, status=Status.INVALID_DTYPE):
        super().__init__(status, "MLA_STATUS_" + Status(status).name, message, BINDING)
