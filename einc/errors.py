"""Every error a user can cause is an EincError.

Subclasses also derive from the builtin numpy raises in the same situation
(ValueError or TypeError), so code written against numpy.einsum keeps working.
"""


class EincError(Exception):
    """Base class of every error einc raises on purpose."""


class EincSyntaxError(EincError, ValueError):
    """The subscripts string does not parse; the message shows a caret under the culprit."""

    def __init__(self, message, subscripts=None, position=None):
        self.subscripts = subscripts
        self.position = position
        if subscripts is not None and position is not None:
            message = f"{message}\n  {subscripts}\n  {' ' * position}^"
        super().__init__(message)


class EincSpecError(EincError, ValueError):
    """The einsum is well-formed text but not a valid contraction (labels, operand count)."""


class EincShapeError(EincError, ValueError):
    """Operand shapes disagree with the subscripts or with each other."""


class EincTypeError(EincError, TypeError):
    """A dtype, casting rule or argument type is not acceptable."""


class EincValueError(EincError, ValueError):
    """A keyword argument has a bad value (optimize, order, out, backend, ...)."""


class EincCompileError(EincError, RuntimeError):
    """A generated kernel failed to compile; carries the compiler log and the source path."""

    def __init__(self, message, log="", source_path=None):
        self.log = log
        self.source_path = source_path
        text = message
        if source_path:
            text += f"\n  source: {source_path}"
        if log:
            text += f"\n  log:\n{log}"
        super().__init__(text)


class EincCudaError(EincError, RuntimeError):
    """A CUDA driver call failed (out of memory, a kernel fault, no device...)."""
