/* A stand-in for Windows' bcryptprimitives.dll, for running tests under Wine only:
 * Wine 8.0 lacks the DLL, and Rust's standard library (1.78 on) imports ProcessPrng
 * from it, so no Rust program starts there without it. Never shipped. */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
