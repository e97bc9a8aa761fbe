"""Front-end fuzzing: arbitrary calls give numpy's answer or an EincError, nothing else.

The property tests run tests/fuzz_frontend.py's strategies through tests/fuzz_check.py's
contract on a small budget (CI derandomizes them, see conftest.py); `make fuzz` runs the
same for 100,000 fresh inputs. Below them, one fixed case per bug the fuzzer found.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import einc
from einc import errors as E
from einc.cli import main
from fuzz_check import outcome
from fuzz_frontend import cli_cases, einsum_cases, expression_cases, path_cases

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


@FUZZ
@given(einsum_cases())
def test_einsum_calls_keep_the_contract(case):
    outcome(case)


@settings(FUZZ, max_examples=100)
@given(path_cases())
def test_contract_path_calls_keep_the_contract(case):
    outcome(case)


@settings(FUZZ, max_examples=100)
@given(expression_cases())
def test_contract_expression_calls_keep_the_contract(case):
    outcome(case)


@settings(FUZZ, max_examples=60)
@given(cli_cases())
def test_cli_calls_keep_the_contract(case):
    outcome(case)


# ------------------------------------------------------------------ bugs the fuzzer found

a23, b34 = np.ones((2, 3)), np.ones((3, 4))


@pytest.mark.parametrize("call,cls,needle", [
    # unhashable or array-valued options failed inside the cache lookup (TypeError/ValueError)
    (lambda: einc.einsum("ij,jk", a23, b34, strategy=[1]), E.EincValueError, "strategy=[1]"),
    (lambda: einc.einsum("ij,jk", a23, b34, order=[1]), E.EincValueError, "order=[1]"),
    (lambda: einc.einsum("ij,jk", a23, b34, casting=[1]), E.EincValueError, "casting=[1]"),
    (lambda: einc.einsum("ij,jk", a23, b34, order=np.array(["C", "F"])), E.EincValueError, "order="),
    (lambda: einc.contract_expression("ij,jk", (2, 3), (3, 4))(a23, b34, order=np.array(["C", "F"])),
     E.EincValueError, "order="),
    # casting='no' let mixed operand dtypes through (numpy refuses them)
    (lambda: einc.einsum("i,i", np.ones(2, bool), np.ones(2, np.uint8), casting="no"),
     E.EincTypeError, "operand 0 has dtype bool"),
    # contract_path(shapes=True) and contract_expression took anything as a shape
    (lambda: einc.contract_path("ij", None, shapes=True), E.EincTypeError, "operand 0"),
    (lambda: einc.contract_path("ij", 5, shapes=True), E.EincTypeError, "operand 0"),
    (lambda: einc.contract_path("", "2x3", shapes=True), E.EincTypeError, "'2x3'"),
    (lambda: einc.contract_path("ij,jk", (2, -3), (3, 4), shapes=True), E.EincShapeError, "negative"),
    (lambda: einc.contract_expression("ij", (2.5, 3)), E.EincTypeError, "operand 0"),
    (lambda: einc.contract_expression("i", ("a",)), E.EincTypeError, "operand 0"),
    (lambda: einc.contract_expression("i", 5), E.EincTypeError, "operand 0"),
    (lambda: einc.contract_expression("ij", (-1, 2)), E.EincShapeError, "negative"),
    # shapes no numpy array can have: np.empty's ValueError escaped
    (lambda: einc.contract_expression("i", (10**30,)), E.EincShapeError, "larger than"),
    (lambda: einc.contract_expression("ij", (2**40, 2**40)), E.EincShapeError, "larger than"),
    (lambda: einc.contract_expression("ij,jk", (2, 3), (3, 4), dtype=["float32"]), E.EincValueError, "1 dtype"),
])
def test_fuzzer_found_error(call, cls, needle):
    with pytest.raises(cls) as info:
        call()
    assert isinstance(info.value, einc.EincError)
    assert needle in str(info.value), str(info.value)


@pytest.mark.parametrize("optimize", [[], ["einsum_path"]])
def test_empty_path_for_one_operand_still_computes(optimize):
    # was: no step planned, so the output came back uninitialised (einc.einsum('c', a, optimize=[]))
    a = np.array([2, 1], np.uint8)
    np.testing.assert_array_equal(einc.einsum("c", a, optimize=optimize), a)
    np.testing.assert_array_equal(einc.einsum("ij->j", a23, optimize=optimize), a23.sum(0))


def test_contract_expression_plans_huge_shapes_without_allocating():
    # planned from descriptions of the operands: a 20 TB operand costs nothing to plan
    expr = einc.contract_expression("ij,jk->ik", (2**20, 2**20), (2**20, 8))
    assert expr.shapes == ((2**20, 2**20), (2**20, 8))


def test_order_in_either_case_as_numpy():
    # numpy takes order='c'; einc raised EincValueError
    got = einc.einsum("ij->ji", a23 * 2, order="f")
    np.testing.assert_array_equal(got, np.einsum("ij->ji", a23 * 2, order="f"))
    assert got.flags.f_contiguous
    expr = einc.contract_expression("ij,jk->ik", (2, 3), (3, 4))
    np.testing.assert_array_equal(expr(a23, b34, order="c"), a23 @ b34)


@pytest.mark.parametrize("shapes,needle", [("x", "'x' is not sizes"), ("2x", "'2x' is not sizes"),
                                           ("2x3,1e3", "'1e3'"), ("=-1x2", "negative")])
def test_cli_bad_shapes_are_reported(shapes, needle, capsys):
    # were: ValueError from int() out of parse_shapes (einc explain , --shapes x)
    assert main(["explain", "ij,jk", f"--shapes{'' if shapes[0] == '=' else '='}{shapes}"]) == 2
    assert needle in capsys.readouterr().err


def test_out_dtype_takes_part_in_the_computation_as_in_numpys_loop_nest():
    # was: int8 operands summed in int8 (wrapping to -56) and then cast into the int64 out;
    # numpy's loop nest computes in the result type of the operands and out: 200
    a, one = np.array([100, 100], np.int8), np.ones(2, np.int8)
    for args in (("i->", a), ("i,i->", a, one)):
        out = np.zeros((), np.int64)
        assert einc.einsum(*args, out=out) is out and out == 200 == np.einsum(*args, out=np.zeros((), np.int64))
    out = np.zeros(2, np.float16)  # bools counted, not or-ed, into a float out
    np.testing.assert_array_equal(einc.einsum("ab->a", np.ones((2, 3), bool), out=out), [3, 3])


@pytest.mark.parametrize("call,cls,needle", [
    # an out= that is not an array reached the cache key (AttributeError)
    (lambda: einc.contract_expression("i", (2,))(np.ones(2), out=[0, 0]), E.EincTypeError, "out must be"),
    (lambda: einc.contract_expression("i", (2,))(np.ones(2), dtype=[1]), E.EincTypeError, "dtype="),
    # bytes were read as the first operand of the sublist form
    (lambda: einc.einsum(b"i", np.ones(2)), E.EincTypeError, "subscripts must be a str, got bytes"),
])
def test_fuzzer_found_error_2(call, cls, needle):
    with pytest.raises(cls, match=needle):
        call()


def test_dtype_strings_numpy_cannot_parse_are_eincerrors(capsys):
    # np.dtype("akb,bi,...->ki") raises ValueError, not TypeError; it escaped einsum and the CLI
    with pytest.raises(E.EincTypeError, match="is not a dtype"):
        einc.einsum("i->", np.ones(2), dtype="akb,bi,...->ki")
    assert main(["explain", "ii->i", "--dtype", "akb,bi,...->ki", "--shapes", "2x2"]) == 2
    assert "is not a dtype" in capsys.readouterr().err
