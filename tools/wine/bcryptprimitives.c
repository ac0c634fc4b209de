// ProcessPrng, which Rust's standard library calls for random bytes on Windows 10+,
// lives in bcryptprimitives.dll; Wine 8 has no such DLL. This one answers it with
// RtlGenRandom (advapi32's SystemFunction036), which Wine has. Test prefixes only.
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
