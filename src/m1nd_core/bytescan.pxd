# Byte-level helpers shared by the text kernels (termcount, wordfold): one hash and one whitespace test, so the two
# tokenise and hash alike.
from libc.stdint cimport uint8_t, uint64_t


cdef inline uint64_t fnv1a(const char* p, Py_ssize_t n) noexcept nogil:
    """FNV-1a, 64 bits, of ``n`` bytes."""
    cdef uint64_t h = 14695981039346656037ULL
    cdef Py_ssize_t k
    for k in range(n):
        h ^= <uint8_t>p[k]
        h *= 1099511628211ULL
    return h


cdef inline bint is_space(uint8_t c) noexcept nogil:
    """ASCII whitespace as ``str.split()`` and ``str.strip()`` see it (Py_UNICODE_ISSPACE below 128): \\t \\n \\v
    \\f \\r (9-13), the four information separators \\x1c-\\x1f (28-31) and the space (32); one bit each of a mask."""
    return c <= 32 and (0x1F0003E00ULL >> c) & 1
