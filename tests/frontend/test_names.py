"""demangle_name / qualified_name / find_kernel."""

from __future__ import annotations

import pytest

from tlpsim.errors import KernelNotFound
from tlpsim.frontend.names import demangle_name, find_kernel, qualified_name


@pytest.mark.parametrize(
    ("mangled", "plain", "qualified"),
    [
        ("_Z6vecaddPKfS0_Pfi", "vecadd", "vecadd"),
        ("_ZN2ns6kernelEPf", "kernel", "ns::kernel"),
        ("_Z6kernelIfEvPT_i", "kernel", "kernel"),
        ("cfunc", "cfunc", "cfunc"),
        ("__internal_accurate_pow", "__internal_accurate_pow", "__internal_accurate_pow"),
        # names produced by nvcc 13.5
        ("_ZN1a1b4deepILi3EfEEvPT0_", "deep", "a::b::deep"),
        ("_ZNK2ns2Op3runEf", "run", "ns::Op::run"),
        ("_Z4tmplI3FooEv4WrapIT_EPS2_", "tmpl", "tmpl"),
        ("_Z6applykIZ4hostvEUlfE_EvT_Pf", "applyk", "applyk"),
        ("_ZN36_GLOBAL__N__e2c46734_4_n_cu_ca2e4da04anonEPf", "anon", "(anonymous namespace)::anon"),
        ("_Z2tkIiEvPT_i", "tk", "tk"),
        ("_Z6helperPfi$1", "helper", "helper"),
        # L (internal linkage) and K/V/r qualifiers inside N...E
        ("_ZL6kernelPf", "kernel", "kernel"),
        ("_ZN5outer5innerL6kernelEPf", "kernel", "outer::inner::kernel"),
        ("_ZNVK3Foo3getEv", "get", "Foo::get"),
        # template args in the middle / at the end of nested names
        ("_ZN2ns6kernelIfEEvPT_", "kernel", "ns::kernel"),
        ("_ZN3FooIiE3barEv", "bar", "Foo::bar"),
        ("_ZN2ns6kernelILi3ELb1EJifEEEvv", "kernel", "ns::kernel"),
        ("_ZN2ns6kernelIN3cub6detail5EmptyENS_3FooEEEvv", "kernel", "ns::kernel"),
        ("_ZN2ns6kernelIPFvPiEEEvv", "kernel", "ns::kernel"),
        ("_ZN2ns6kernelIL_Z3foovEEEvv", "kernel", "ns::kernel"),
        ("_ZN2ns6kernelIDv4_fEEvv", "kernel", "ns::kernel"),
        ("_ZNSt6vectorIiSaIiEE9push_backERKi", "push_back", "std::vector::push_back"),
        # ctor/dtor/operators/local names
        ("_ZN3FooIiEC2Ev", "Foo", "Foo::Foo"),
        ("_ZN3FooIiED1Ev", "~Foo", "Foo::~Foo"),
        ("_ZN2ns3FooplERKS0_", "operator+", "ns::Foo::operator+"),
        ("_ZZ6reducePKfPfE1s", "s", "reduce::s"),
    ],
)
def test_demangle(mangled, plain, qualified):
    assert demangle_name(mangled) == plain
    assert qualified_name(mangled) == qualified
    assert demangle_name(mangled, qualified=True) == qualified


def test_undecodable_names_returned_unchanged():
    assert demangle_name("_Z") == "_Z"
    assert demangle_name("_Z999abc") == "_Z999abc"
    assert qualified_name("_ZN") == "_ZN"


NAMES = [
    "_Z6vecaddPKfS0_Pfi",
    "_ZN2ns6kernelEPf",
    "_ZN2ms6kernelEPf",
    "_Z2tkIfEvPT_i",
    "_Z2tkIiEvPT_i",
    "cfunc",
]


def test_find_kernel_exact_plain_qualified():
    assert find_kernel(NAMES, "_Z6vecaddPKfS0_Pfi") == "_Z6vecaddPKfS0_Pfi"
    assert find_kernel(NAMES, "vecadd") == "_Z6vecaddPKfS0_Pfi"
    assert find_kernel(NAMES, "ns::kernel") == "_ZN2ns6kernelEPf"
    assert find_kernel(NAMES, "::ms::kernel") == "_ZN2ms6kernelEPf"
    assert find_kernel(NAMES, "cfunc") == "cfunc"
    assert find_kernel(iter(NAMES), "_Z2tkIiEvPT_i") == "_Z2tkIiEvPT_i"


def test_find_kernel_ambiguous():
    with pytest.raises(KernelNotFound) as info:
        find_kernel(NAMES, "kernel")
    msg = str(info.value)
    assert msg.startswith("kernel name 'kernel' is ambiguous: it matches 2 kernels")
    assert "  _ZN2ns6kernelEPf  (ns::kernel)" in msg
    assert "  _ZN2ms6kernelEPf  (ms::kernel)" in msg
    with pytest.raises(KernelNotFound, match="'tk' is ambiguous") as info:
        find_kernel(NAMES, "tk")
    assert "_Z2tkIfEvPT_i" in str(info.value) and "_Z2tkIiEvPT_i" in str(info.value)


def test_find_kernel_not_found():
    with pytest.raises(KernelNotFound) as info:
        find_kernel(NAMES, "vecad")
    assert str(info.value) == (
        "no kernel named 'vecad'; available kernels: cfunc, kernel, tk, vecadd (did you mean 'vecadd'?)"
    )
    with pytest.raises(KernelNotFound) as info:
        find_kernel([], "vecadd")
    assert str(info.value) == "no kernel named 'vecadd': the module contains no kernels"
