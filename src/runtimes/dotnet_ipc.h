/* Internal to runtimes/dotnet*.c: a client of the CoreCLR diagnostics IPC protocol (the
 * Unix socket dotnet-diagnostic-<nspid>-<key>-socket every runtime since .NET Core 3.0
 * listens on in its TMPDIR). Every read and write is bounded in time: a runtime that
 * stops answering costs kiln a timeout, never a hung thread. */
#ifndef KILN_RUNTIMES_DOTNET_IPC_H
#define KILN_RUNTIMES_DOTNET_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DOTNET_IPC_TIMEOUT_MS 2000

/* The path of process pid's diagnostics socket, seen through /proc/<pid>/root (so it
 * works for containers) in its TMPDIR or /tmp, written into path (size size). Returns
 * 0, or -ENOENT when the process has none (not CoreCLR, or DOTNET_EnableDiagnostics=0). */
int dotnet_ipc__socket_path(pid_t pid, char *path, size_t size);

/* Connects to process pid's diagnostics socket. Returns the fd (the caller closes it),
 * -ENOENT when it has none, or another negative errno. */
int dotnet_ipc__connect(pid_t pid);

/* Sends one command (set, id) with payload[0..len) on fd. Returns 0 or a negative errno
 * (-ETIMEDOUT after timeout_ms). */
int dotnet_ipc__send(int fd, uint8_t set, uint8_t id, const void *payload, size_t len,
		     int timeout_ms);

/* Reads one reply on fd: its payload (at most cap bytes are kept) into reply, its size
 * into *len. Returns 0 for OK, -EREMOTEIO for an Error reply (its HRESULT in *hresult when
 * not NULL), -EPROTO for a reply that is not the protocol's, -ECONNRESET when the runtime
 * closed the socket, -ETIMEDOUT after timeout_ms. */
int dotnet_ipc__recv_reply(int fd, void *reply, size_t cap, size_t *len, uint32_t *hresult,
			   int timeout_ms);

/* Reads what is there on fd, waiting at most timeout_ms for something: returns the bytes
 * read (0 at the end of the stream), -EAGAIN when nothing came in time, or a negative
 * errno. */
long dotnet_ipc__read(int fd, void *buf, size_t cap, int timeout_ms);

/* Starts an EventPipe session on a new connection to pid (CollectTracing, which every
 * runtime since 3.0 takes; the runtime does a method rundown when it stops): the sample
 * profiler when sample is true, the JIT's method load events always. Writes the session
 * id; returns the connection, on which the NetTrace stream follows, or a negative errno. */
int dotnet_ipc__start_session(pid_t pid, int sample, uint64_t *session);

/* Sends StopTracing for session on a new connection to pid and returns that connection
 * (its reply comes once the runtime has written the session's rundown: read it after the
 * stream's end), or a negative errno. */
int dotnet_ipc__stop_session(pid_t pid, uint64_t session);

#endif
