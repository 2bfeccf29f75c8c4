/* Wine before 9 has no bcryptprimitives.dll, which Rust's std (1.78 and
 * later) imports for ProcessPrng, its source of random numbers: every
 * Rust program fails to start there. This stand-in exports ProcessPrng on
 * top of RtlGenRandom (advapi32's SystemFunction036), which Wine has.
 * Built with mingw-w64 by .ci/cross.sh into the CI's own Wine prefix; it
 * is never shipped. */
#include <windows.h>

BOOLEAN NTAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
