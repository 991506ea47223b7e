"""Tables every resolution step shares: node kinds, language families, builtins and stoplists, lookup result
codes, and the per-file resolution state (``FileState``)."""

from __future__ import annotations

import posixpath
from typing import Any

from m1nd.graph.schema import KINDS, RELATIONS


def _words(text: str) -> frozenset[str]:
    """A frozenset from a whitespace-separated word list (keeps long tables readable)."""
    return frozenset(text.split())


(
    K_DIR,
    K_FILE,
    K_MOD,
    K_CLASS,
    K_STRUCT,
    K_ENUM,
    K_INTERFACE,
    K_TRAIT,
    K_TYPE,
    K_FN,
    K_IMPL,
    K_SECTION,
    K_MACRO,
) = (
    KINDS[k]
    for k in (
        "dir",
        "file",
        "mod",
        "class",
        "struct",
        "enum",
        "interface",
        "trait",
        "type",
        "fn",
        "impl",
        "section",
        "macro",
    )
)
CLASSLIKE = frozenset({K_CLASS, K_STRUCT, K_ENUM, K_INTERFACE, K_TRAIT, K_IMPL, K_TYPE})
TYPE_KINDS = frozenset({K_CLASS, K_STRUCT, K_ENUM, K_INTERFACE, K_TRAIT, K_TYPE})
BASE_KINDS = frozenset({K_CLASS, K_STRUCT, K_INTERFACE, K_TRAIT, K_TYPE})
IMPL_KINDS = frozenset({K_INTERFACE, K_TRAIT, K_CLASS})
CALL_KINDS = frozenset({K_FN, K_CLASS, K_STRUCT})
NEW_KINDS = frozenset({K_CLASS, K_STRUCT, K_ENUM})
DECORATOR_KINDS = frozenset({K_FN, K_CLASS})
FN_KINDS = frozenset({K_FN})
ANY_SYMBOL = frozenset(
    {K_MOD, K_CLASS, K_STRUCT, K_ENUM, K_INTERFACE, K_TRAIT, K_TYPE, K_FN, K_IMPL, K_MACRO}
)
MACRO_KINDS = frozenset({K_MACRO})
IMPORTABLE_KINDS = TYPE_KINDS | FN_KINDS

W0 = {r.code: r.w0 for r in RELATIONS}
W_CACHE: dict[tuple[int, float], float] = {}

FAMILY = {
    "python": "py",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "go": "go",
    "rust": "rs",
    "java": "java",
    "c": "c",
    "cpp": "c",
    "csharp": "cs",
    "ruby": "rb",
    "php": "php",
    "kotlin": "kt",
    "other": "other",
    "markdown": "md",
    "config": "cfg",
}
CODE_FAMILIES = frozenset({"py", "js", "go", "rs", "java", "c", "cs", "rb", "php", "kt", "other"})
#: families whose types live in packages / namespaces resolved like Java's (package declaration, imports of
#: ``a.b.C``, ``a.b.*``): Kotlin, C# (``using A.B;`` is a star import of a namespace), PHP (``use A\B\C``)
PACKAGED_FAMILIES = frozenset({"java", "kt", "cs", "php"})
#: families where a bare call inside a class body may name a method of the class (``foo()`` = ``this.foo()``)
MEMBER_CALL_FAMILIES = frozenset({"java", "kt", "cs", "c", "rb"})
#: families whose imports name files by path: C/C++ ``#include``, Ruby ``require`` / ``require_relative``
PATH_IMPORT_FAMILIES = frozenset({"c", "rb"})

#: graph.md §7 common-method stoplist (unknown receivers)
STOPLIST = _words("""
    get set add append update run start stop close open read write send put pop keys items values join split
    format map filter forEach push then call apply init new len String Error toString equals hashCode clone
    next iter into from unwrap expect ok err is_empty size length load save log info debug warn error print
    println assert
""")

#: names that are language builtins: never searched graph-wide, never counted unresolved
BUILTINS: dict[str, frozenset[str]] = {
    "py": _words("""
        abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile
        complex copyright credits delattr dict dir divmod enumerate eval exec exit filter float format
        frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len license
        list locals map max memoryview min next object oct open ord pow print property quit range repr
        reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip __import__
        NotImplemented Ellipsis None True False BaseException Exception ArithmeticError AssertionError
        AttributeError BufferError EOFError ImportError ModuleNotFoundError LookupError IndexError KeyError
        MemoryError NameError UnboundLocalError OSError IOError EnvironmentError BlockingIOError
        ChildProcessError ConnectionError BrokenPipeError ConnectionAbortedError ConnectionRefusedError
        ConnectionResetError FileExistsError FileNotFoundError InterruptedError IsADirectoryError
        NotADirectoryError PermissionError ProcessLookupError TimeoutError ReferenceError RuntimeError
        NotImplementedError RecursionError StopIteration StopAsyncIteration SyntaxError IndentationError
        TabError SystemError TypeError ValueError UnicodeError UnicodeDecodeError UnicodeEncodeError
        UnicodeTranslateError Warning UserWarning DeprecationWarning PendingDeprecationWarning SyntaxWarning
        RuntimeWarning FutureWarning ImportWarning UnicodeWarning BytesWarning ResourceWarning
        EncodingWarning ZeroDivisionError OverflowError FloatingPointError GeneratorExit KeyboardInterrupt
        SystemExit ExceptionGroup BaseExceptionGroup Any Optional Union List Dict Tuple Set FrozenSet
        Callable Iterable Iterator Sequence Mapping Type
    """),
    "js": _words("""
        require parseInt parseFloat isNaN isFinite setTimeout setInterval clearTimeout clearInterval
        setImmediate queueMicrotask structuredClone fetch encodeURIComponent decodeURIComponent encodeURI
        decodeURI Array Object String Number Boolean Symbol BigInt Date RegExp Error TypeError RangeError
        SyntaxError Map Set WeakMap WeakSet Promise Proxy Reflect JSON Math Intl URL URLSearchParams Buffer
        Uint8Array Int32Array Float64Array ArrayBuffer DataView Function Record Partial Required Readonly
        Pick Omit Exclude Extract ReturnType Parameters NonNullable Awaited InstanceType Iterable Iterator
        AsyncIterable PromiseLike ReadonlyArray HTMLElement Element Event Node Document Window describe it
        test expect beforeEach afterEach beforeAll afterAll jest vi console
    """),
    "go": _words("""
        append cap clear close complex copy delete imag len make max min new panic print println real
        recover bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string
        uint uint8 uint16 uint32 uint64 uintptr any comparable
    """),
    "rs": _words("""
        Ok Err Some None Box Vec String Option Result HashMap HashSet BTreeMap BTreeSet VecDeque Arc Rc
        RefCell Cell Mutex RwLock Cow Default Clone Copy Debug Display Send Sync Sized Iterator IntoIterator
        From Into AsRef AsMut Drop Fn FnMut FnOnce PartialEq Eq PartialOrd Ord Hash ToString Path PathBuf
        Self
    """),
    "java": _words("""
        String Object Integer Long Double Float Short Byte Character Boolean Number Math System Thread
        Runnable Exception RuntimeException Throwable Error Override Deprecated SuppressWarnings
        FunctionalInterface Iterable Comparable CharSequence StringBuilder StringBuffer Class Void Enum
        Record IllegalArgumentException IllegalStateException NullPointerException
        UnsupportedOperationException IndexOutOfBoundsException ClassCastException InterruptedException
        AutoCloseable Cloneable List Map Set Collection Optional
    """),
    "c": _words("""
        printf fprintf sprintf snprintf vsnprintf malloc calloc realloc free memcpy memset memmove memcmp strlen
        strcmp strncmp strcpy strncpy strcat strchr strrchr strstr strdup assert exit abort sizeof
    """),
    "rb": _words("""
        puts print p require require_relative raise attr_reader attr_writer attr_accessor private protected
        public lambda proc loop format include extend new describe context it specify expect let let! subject
        before after allow receive double eq to not_to raise_error
    """),
    "kt": _words("""
        println print listOf mutableListOf mapOf mutableMapOf setOf arrayOf require check error TODO lazy with
        apply also let run String Int Long Any Unit Boolean
    """),
    "cs": _words("String Object Console Math Task Exception ArgumentNullException ArgumentException nameof"),
    "php": _words("""
        array count isset unset empty is_array is_string strlen sprintf implode explode in_array array_merge
        array_keys array_map str_replace
    """),
}

JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
CONFIG_BASENAME_MIN = 5

#: definition extras the resolver keeps (Go receiver, Rust impl, outside bases, receiver-type tables)
EXTRA_KEYS = ("recv", "impl_type", "impl_trait", "ext_base", "attrs", "ret", "items", "yields", "abstract")

#: most types a receiver's evaluation may hold (more: not known)
SET_MAX = 8
#: weight factor of an edge found through several possible receiver types that agree on the method
SET_FACTOR = 0.9

NOTFOUND = -1
EXTERNAL = -2
AMBIG = -3
BROKEN = -4  # a dotted chain broke on a non-module (``obj.attr.m()``, an imported variable): unknown receiver


class FileState:
    __slots__ = (
        "base",
        "binding_state",
        "bindings",
        "blob",
        "dir",
        "ext_star",
        "externals",
        "fam",
        "idx",
        "aliases",
        "import_edges",
        "lang",
        "pkg",
        "rel",
        "rust_key",
        "stars",
        "syms",
    )

    def __init__(self, rel: str, idx: int, lang: str, blob: dict[str, Any]) -> None:
        self.rel = rel
        self.idx = idx
        self.lang = lang
        self.fam = FAMILY.get(lang, "other")
        self.blob = blob
        self.syms: list[int] = []
        self.dir = posixpath.dirname(rel)
        self.base = rel.rsplit("/", 1)[-1]
        self.bindings: dict[str, int] = {}
        self.stars: list[int] = []
        self.ext_star = False  # a star import from outside the graph: unknown names may come from it
        self.binding_state = 0  # 0 = not computed, 1 = in progress, 2 = done
        self.import_edges: list[tuple[int, int, float]] = []  # (target, relation, factor)
        self.externals: set[str] = set()
        self.pkg = blob.get("package")
        self.rust_key: tuple[str, tuple[str, ...]] | None = None
        # Python module-level aliases (``Lock = _allocate_lock``): name -> the dotted name it copies
        self.aliases: dict[str, str] | None = (blob.get("extra") or {}).get("aliases") if self.fam == "py" else None


def common_prefix_len(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
