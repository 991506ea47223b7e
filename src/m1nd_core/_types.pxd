# Shared C types of the m1nd_core kernels (see __init__.py for the contract).
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t

ctypedef int32_t node_t      # node index
ctypedef int64_t edge_t      # indptr offset / edge position
ctypedef float weight_t      # weight, activation
ctypedef uint8_t rel_t       # relation code
ctypedef int16_t hop_t       # hop count (-1 = unreached)
ctypedef int8_t dir_t        # +1 forward, -1 backward
ctypedef uint32_t mask_t     # relation bitmask
