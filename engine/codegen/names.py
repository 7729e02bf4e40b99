"""Which names may be the emitted function's name and its parameters' names.

A name is refused, never renamed: the caller wrote it and the code must use it. Every
target takes ASCII identifiers only (Python would fold some other letters together,
NFKC, and C compilers differ on them) that are not a generated local (``t_0``,
``t_1``...), and the function's name is not one of its parameters. For C and CUDA a
name is also not a C or C++ keyword (CUDA is C++, and C code is often compiled as C++),
not reserved to the implementation (``__`` anywhere, which C++ reserves, or ``_`` and an
uppercase letter), not a ``<stdint.h>`` name or one the standard keeps for it
(``int..._t``, ``INT..._MAX``, ``INT..._C``...), not a macro GCC predefines outside
strict ISO mode (``unix``, ``linux``, ``i386``), and for CUDA not a built-in variable
(``threadIdx``...). A C or CUDA function name is also not ``main``, does not start with
``_`` (reserved at file scope) and is not a C library function GCC declares as built-in
(``index``, ``abs``, ``floor``...). For Python a name is not a keyword and not a function
the code calls (``max``, ``min``, ``int``).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Sequence
from typing import Final

__all__ = ["DEFAULT_NAME", "name_problem"]

DEFAULT_NAME: Final = "quorem_index"
"""The emitted function's name when none is given (collides with no library name)."""

_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LOCAL: Final = re.compile(r"t_[0-9]+")
_C_KEYWORDS: Final = frozenset(
    """auto break case char const continue default do double else enum extern float for
    goto if inline int long register restrict return short signed sizeof static struct
    switch typedef union unsigned void volatile while alignas alignof bool constexpr false
    nullptr static_assert thread_local true typeof typeof_unqual""".split()  # noqa: SIM905  (word lists, not 300 lines)
)
_CPP_KEYWORDS: Final = frozenset(
    """and and_eq asm bitand bitor catch char8_t char16_t char32_t class co_await
    co_return co_yield compl concept const_cast consteval constinit decltype delete
    dynamic_cast explicit export friend mutable namespace new noexcept not not_eq operator
    or or_eq private protected public reinterpret_cast requires static_cast template this
    throw try typeid typename using virtual wchar_t xor xor_eq""".split()  # noqa: SIM905  (word lists, not 300 lines)
)
# The names <stdint.h> defines and those C reserves for its future versions (C17 7.31.10).
_STDINT: Final = re.compile(
    r"u?int\w*_t|U?INT\w*_(MAX|MIN|C|WIDTH)"
    r"|(SIZE|PTRDIFF|SIG_ATOMIC|WCHAR|WINT)_(MAX|MIN|WIDTH)"
)
_GCC_MACROS: Final = frozenset({"unix", "linux", "i386"})
_CUDA_BUILTINS: Final = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"})
_PYTHON_USED: Final = frozenset({"max", "min", "int"})
# The functions GCC 12 declares as built-in on glibc, each warned about ("conflicting
# types for built-in function") when defined as int64_t f(int64_t...); found by
# compiling such a definition of every function of glibc's stdlib.h, string.h,
# strings.h, math.h, stdio.h and ctype.h; labs, llabs and imaxabs conflict where
# int64_t is not their type.
_GCC_BUILTINS: Final = frozenset(
    """
    abort abs acos acosf acosh acoshf acoshl acosl aligned_alloc alloca asin asinf
    asinh asinhf asinhl asinl atan atan2 atan2f atan2l atanf atanh atanhf atanhl
    atanl bcmp bcopy bzero calloc cbrt cbrtf cbrtl ceil ceilf ceill copysign
    copysignf copysignl cos cosf cosh coshf coshl cosl drem dremf dreml erf erfc
    erfcf erfcl erff erfl exit exp exp2 exp2f exp2l expf expl expm1 expm1f expm1l
    fabs fabsf fabsl fdim fdimf fdiml ffs ffsl ffsll finite finitef finitel floor
    floorf floorl fma fmaf fmal fmax fmaxf fmaxl fmin fminf fminl fmod fmodf fmodl
    fprintf fputc fputc_unlocked fputs free frexp frexpf frexpl fscanf fwrite
    fwrite_unlocked gamma gammaf gammal hypot hypotf hypotl ilogb ilogbf ilogbl
    imaxabs index isalnum isalpha isascii isblank iscntrl isdigit isgraph isinf
    isinff isinfl islower isnan isnanf isnanl isprint ispunct isspace isupper
    isxdigit j0 j0f j0l j1 j1f j1l jn jnf jnl labs ldexp ldexpf ldexpl lgamma
    lgamma_r lgammaf lgammaf_r lgammal lgammal_r llabs llrint llrintf llrintl
    llround llroundf llroundl log log10 log10f log10l log1p log1pf log1pl log2 log2f
    log2l logb logbf logbl logf logl lrint lrintf lrintl lround lroundf lroundl
    malloc memchr memcmp memcpy memmove memset modf modff modfl nan nanf nanl
    nearbyint nearbyintf nearbyintl nextafter nextafterf nextafterl nexttoward
    nexttowardf nexttowardl posix_memalign pow powf powl printf putc putc_unlocked
    putchar putchar_unlocked puts realloc remainder remainderf remainderl remquo
    remquof remquol rindex rint rintf rintl round roundf roundl scalb scalbf scalbl
    scalbln scalblnf scalblnl scalbn scalbnf scalbnl scanf significand significandf
    significandl sin sinf sinh sinhf sinhl sinl snprintf sprintf sqrt sqrtf sqrtl
    sscanf stpcpy stpncpy strcasecmp strcat strchr strcmp strcpy strcspn strdup
    strlen strncasecmp strncat strncmp strncpy strndup strnlen strpbrk strrchr
    strspn strstr tan tanf tanh tanhf tanhl tanl tgamma tgammaf tgammal toascii
    tolower toupper trunc truncf truncl vfprintf vfscanf vprintf vscanf vsnprintf
    vsprintf vsscanf y0 y0f y0l y1 y1f y1l yn ynf ynl
    """.split()  # noqa: SIM905  (word lists, not 300 lines)
)


def _c_problem(name: str, cuda: bool) -> str | None:
    if name in _C_KEYWORDS:
        return "is a C keyword"
    if name in _CPP_KEYWORDS:
        return "is a C++ keyword (CUDA is C++, and C code is often compiled as C++)"
    if "__" in name or re.match(r"_[A-Z]", name):
        return "is reserved to the C/C++ implementation ('__' in it, or '_' and an uppercase)"
    if _STDINT.fullmatch(name):
        return "is a <stdint.h> name (or one C reserves for it)"
    if name in _GCC_MACROS:
        return "is a macro GCC predefines outside strict ISO C"
    if cuda and name in _CUDA_BUILTINS:
        return "is a CUDA built-in variable"
    return None


def name_problem(
    name: str, lang: str, *, function: bool = False, params: Sequence[str] = ()
) -> str | None:
    """Why ``name`` cannot be a parameter in ``lang``'s emitted code; None if it can.

    With ``function``: why it cannot be the function's name, given its ``params``. The
    reason is a phrase to follow the name: ``'pass' is a Python keyword``.
    """
    if not _IDENT.fullmatch(name):
        return "is not an identifier (ASCII letters, digits and '_', not starting with a digit)"
    if _LOCAL.fullmatch(name):
        return "is the name of a local of the generated code (t_0, t_1, ...)"
    if function and name in params:
        return "is also a parameter's name"
    if lang == "python":
        if keyword.iskeyword(name):
            return "is a Python keyword"
        if name in _PYTHON_USED:
            return "is a function the generated Python code calls"
        return None
    problem = _c_problem(name, cuda=lang == "cuda")
    if problem is None and function:
        if name == "main":
            problem = "is the program's entry point"
        elif name.startswith("_"):
            problem = "starts with '_' (reserved at file scope in C)"
        elif name in _GCC_BUILTINS:
            problem = "is a C library function GCC declares as built-in (conflicting types)"
    return problem
