"""Every user mistake is an EincError subclass naming the culprit."""
from __future__ import annotations

import numpy as np
import pytest

import einc
from einc import errors as E

a34, b45 = np.ones((3, 4)), np.ones((4, 5))


@pytest.mark.parametrize("call,cls,needle", [
    (lambda: einc.einsum("ij,j$->i", a34, b45), E.EincSyntaxError, "^"),
    (lambda: einc.einsum("ij,jk->ix", a34, b45), E.EincSpecError, "'x'"),
    (lambda: einc.einsum("ij,jk->ii", a34, b45), E.EincSpecError, "'i'"),
    (lambda: einc.einsum("ij,jk->ik", a34), E.EincSpecError, "2 operand"),
    (lambda: einc.einsum("ij->ij", a34, b45), E.EincSpecError, "1 operand"),
    (lambda: einc.einsum("ijk,jk->ik", a34, b45), E.EincShapeError, "operand 0"),
    (lambda: einc.einsum("ij,jk->ik", a34, np.ones((5, 5))), E.EincShapeError, "size 4 in operand 0 but size 5 in operand 1"),
    (lambda: einc.einsum("ii->i", a34), E.EincShapeError, "operand 0"),
    (lambda: einc.einsum("...i,...i->...", np.ones((2, 3)), np.ones((4, 3))), E.EincShapeError, "ellipsis"),
    (lambda: einc.einsum("ij,jk->ik", a34, b45, optimize="fastest"), E.EincValueError, "fastest"),
    (lambda: einc.einsum("ij,jk->ik", a34, b45, optimize=[(0, 5)]), E.EincValueError, "(0, 5)"),
    (lambda: einc.einsum("ij,jk->ik", a34, b45, dtype="float128x"), E.EincTypeError, "float128x"),
    (lambda: einc.einsum("ij,jk->ik", a34, b45, dtype=np.float32), E.EincTypeError, "operand 0"),
    (lambda: einc.einsum("ij,jk->ik", a34, b45, out=np.empty((3, 4))), E.EincShapeError, "(3, 4)"),
    (lambda: einc.einsum("ij,jk->ik", a34, b45, out=np.empty((3, 5), np.int32)), E.EincTypeError, "int32"),
    (lambda: einc.einsum("ij,jk->ik", a34, b45, out=[[0]]), E.EincTypeError, "out"),
    (lambda: einc.einsum("ij->ij", a34, out=a34), E.EincValueError, "overlaps operand 0"),
    (lambda: einc.einsum("i->i", np.array(["a", "b"])), E.EincTypeError, "operand 0"),
    (lambda: einc.einsum("i->i", np.ones(3), order="X"), E.EincValueError, "order"),
    (lambda: einc.einsum("i->i", np.ones(3), casting="sometimes"), E.EincValueError, "casting"),
    (lambda: einc.einsum("i->i", np.ones(3), strategy="magic"), E.EincValueError, "magic"),
    (lambda: einc.einsum(), E.EincSpecError, "operand"),
    (lambda: einc.einsum("i,i", [1, 2], [[1, 2], [3]]), E.EincTypeError, "operand 1"),
])
def test_error_names_culprit(call, cls, needle):
    with pytest.raises(cls) as info:
        call()
    assert isinstance(info.value, einc.EincError)
    assert needle in str(info.value), str(info.value)


def test_errors_are_numpy_compatible_builtins():
    with pytest.raises(ValueError):
        einc.einsum("ij,jk->ik", a34, np.ones((5, 5)))
    with pytest.raises(TypeError):
        einc.einsum("ij,jk->ik", a34, b45, dtype=np.float32)


def test_syntax_error_caret_position():
    with pytest.raises(E.EincSyntaxError) as info:
        einc.einsum("ij,j$->i", a34, b45)
    lines = str(info.value).splitlines()
    text_line = next(l for l in lines if "ij,j$->i" in l)
    caret = lines[lines.index(text_line) + 1]
    assert caret.index("^") == text_line.index("$")


def test_contract_expression_shape_mismatch():
    expr = einc.contract_expression("ij,jk->ik", (3, 4), (4, 5))
    with pytest.raises(E.EincShapeError, match="operand 1"):
        expr(a34, np.ones((4, 6)))
