/*
 * ferry/stdio.h — source-compatible stdio on ferry streams.
 *
 * Include it instead of <stdio.h> (or compile with -include ferry/stdio.h)
 * and link with -lferry: the program's FILEs become ferry streams, with
 * no change to its source. The system's <stdio.h> is included first, so
 * every type and constant (EOF, BUFSIZ, fpos_t, _IOFBF, SEEK_SET, ...) is
 * the system's; the macros below then point the names at ferry.
 *
 * Only the stream buffers data: fread, getc, read (ferry/unistd.h) and
 * fy_salloc (ferry/asi.h) all take the next bytes of the same buffer, so
 * the interfaces mix freely on one stream. getc and putc are inline: a
 * compare and a pointer bump on the stream's current buffer (page-aligned
 * pool buffers filled with pread). setvbuf and setbuf are accepted and
 * add no copy: the stream keeps its own buffers (only the mode counts).
 *
 * As glibc: line-buffered terminals, unbuffered stderr, every stream
 * flushed at exit, errno values as glibc's.
 *
 * Pipes between two ferry programs: run both with FERRY_STDIO_IPC=1 and
 * a standard output that is a pipe read by a ferry program's standard
 * input moves its bytes through an ipc channel (a shared pool the reader
 * reads in place) instead of the pipe; to anyone else it is still a pipe.
 * The writer offers the channel when it starts and takes it at its first
 * flush if the reader connected by then (an output within 50 ms of start
 * waits that long for it); a reader that is not a ferry program, or one
 * that asked nothing, reads the pipe as always. Each end checks that its
 * peer is a process of the same user holding that pipe.
 * Bytes written to descriptor 1 beside the stream (write(1, ...), dprintf,
 * a system() or popen child) still go through the pipe: the reader reads
 * the pipe whenever the channel holds nothing older, and the writer, at
 * its next flush after such bytes, leaves the channel for the pipe, so
 * the output keeps the order glibc gives it and no child waits on a full
 * pipe. A child forked from the writer writes the pipe. A reader whose
 * descriptor 0 is also read beside its stream (read(0, ...), a child
 * that reads standard input) finds the pipe empty while the channel
 * lasts: once the reader has taken nothing from the channel for a
 * second, the writer leaves it for the pipe. As with glibc, what the
 * reader's stream had taken in is read only through the stream.
 *
 * Needs glibc 2.32 or later (<sys/single_threaded.h>). A FILE * from this
 * header is a ferry stream, not a glibc FILE: pass it only to code that
 * was compiled with this header too. A library compiled against plain
 * <stdio.h> that takes a FILE * must be given a glibc FILE (opened in a
 * file compiled without this header) or a descriptor; given a ferry one,
 * it would read ferry's stream as a glibc FILE.
 */
#ifndef FERRY_STDIO_H
#define FERRY_STDIO_H

#include <stdio.h>
/* glibc's <stdio_ext.h> is declared here, while FILE is still glibc's, so
 * its guard makes the program's own #include of it (before or after this
 * header) a no-op; the macros below then send its names to ferry's. */
#include <stdio_ext.h>
#include <stdarg.h>
#include <sys/types.h>
#if defined(__GLIBC__) && (__GLIBC__ < 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ < 32))
#error "ferry/stdio.h needs glibc 2.32 or later (__libc_single_threaded)"
#endif
#include <sys/single_threaded.h>
#include <ferry/asi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The front of a stream, which the inline getc and putc use: the unread
 * bytes of the current read buffer and the room left in the current
 * write region. The rest of the stream is private to the library. */
struct fy_file {
    unsigned char *rpos, *rend;
    unsigned char *wpos, *wend;
};
typedef struct fy_file fy_FILE;

extern fy_FILE *fy_stdin, *fy_stdout, *fy_stderr;

fy_FILE *fy_fopen(const char *path, const char *mode);
fy_FILE *fy_fdopen(int fd, const char *mode);
fy_FILE *fy_freopen(const char *path, const char *mode, fy_FILE *f);
int fy_fclose(fy_FILE *f);
int fy_fileno(fy_FILE *f);
fy_FILE *fy_tmpfile(void);
fy_FILE *fy_popen(const char *command, const char *mode);
int fy_pclose(fy_FILE *f);
fy_FILE *fy_fmemopen(void *buf, size_t size, const char *mode);
fy_FILE *fy_open_memstream(char **ptr, size_t *size);

size_t fy__fread(void *ptr, size_t size, size_t n, fy_FILE *f);
size_t fy__fwrite(const void *ptr, size_t size, size_t n, fy_FILE *f);
size_t fy_fread_unlocked(void *ptr, size_t size, size_t n, fy_FILE *f);
size_t fy_fwrite_unlocked(const void *ptr, size_t size, size_t n, fy_FILE *f);

int fy_fgetc(fy_FILE *f);
int fy_fputc(int c, fy_FILE *f);
int fy_ungetc(int c, fy_FILE *f);
char *fy_fgets(char *s, int n, fy_FILE *f);
char *fy_fgets_unlocked(char *s, int n, fy_FILE *f);
int fy__fputs(const char *s, fy_FILE *f);
int fy_fputs_unlocked(const char *s, fy_FILE *f);
int fy_puts(const char *s);
ssize_t fy__getdelim(char **line, size_t *cap, int delim, fy_FILE *f);

int fy_vfprintf(fy_FILE *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
int fy_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
int fy_vdprintf(int fd, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
int fy_vfscanf(fy_FILE *f, const char *fmt, va_list ap) __attribute__((format(scanf, 2, 0)));
int fy_vscanf(const char *fmt, va_list ap) __attribute__((format(scanf, 1, 0)));

int fy_fseek(fy_FILE *f, long off, int whence);
int fy_fseeko(fy_FILE *f, off_t off, int whence);
long fy_ftell(fy_FILE *f);
off_t fy_ftello(fy_FILE *f);
void fy_rewind(fy_FILE *f);
int fy_fgetpos(fy_FILE *f, fpos_t *pos);
int fy_fsetpos(fy_FILE *f, const fpos_t *pos);

int fy_fflush(fy_FILE *f);
int fy_fflush_unlocked(fy_FILE *f);
int fy_feof(fy_FILE *f);
int fy_ferror(fy_FILE *f);
void fy_clearerr(fy_FILE *f);
int fy_setvbuf(fy_FILE *f, char *buf, int mode, size_t size);
void fy_setbuf(fy_FILE *f, char *buf);
void fy_setbuffer(fy_FILE *f, char *buf, size_t size);
void fy_setlinebuf(fy_FILE *f);
void fy_perror(const char *s);

void fy_flockfile(fy_FILE *f);
void fy_funlockfile(fy_FILE *f);
int fy_ftrylockfile(fy_FILE *f);

/* The variadic functions, on their va_list forms. */
static inline int fy_fprintf(fy_FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = fy_vfprintf(f, fmt, ap);
    va_end(ap);
    return r;
}

static inline int fy_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = fy_vfprintf(fy_stdout, fmt, ap);
    va_end(ap);
    return r;
}

static inline int fy_dprintf(int fd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = fy_vdprintf(fd, fmt, ap);
    va_end(ap);
    return r;
}

static inline int fy_fscanf(fy_FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = fy_vfscanf(f, fmt, ap);
    va_end(ap);
    return r;
}

static inline int fy_scanf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = fy_vfscanf(fy_stdin, fmt, ap);
    va_end(ap);
    return r;
}

/* Slow paths of the inline functions below. */
int fy__uflow(fy_FILE *f);
int fy__oflow(fy_FILE *f, int c);

/* The fast paths read the window pointer into a local and test with one
 * branch: compilers then keep a getc loop to one taken branch a byte. */
static inline int fy_getc_unlocked(fy_FILE *f)
{
    unsigned char *p = f->rpos;
    if (__builtin_expect(p < f->rend, 1)) {
        f->rpos = p + 1;
        return *p;
    }
    return fy__uflow(f);
}

static inline int fy_putc_unlocked(int c, fy_FILE *f)
{
    unsigned char *p = f->wpos;
    if (__builtin_expect(p < f->wend, 1)) {
        f->wpos = p + 1;
        return *p = (unsigned char)c;
    }
    return fy__oflow(f, c);
}

/* With one thread nothing can race the stream (glibc's own rule, from
 * __libc_single_threaded); otherwise the locked call. */
static inline int fy_getc(fy_FILE *f)
{
    unsigned char *p = f->rpos;
    if (__builtin_expect((p < f->rend) & (__libc_single_threaded != 0), 1)) {
        f->rpos = p + 1;
        return *p;
    }
    return fy_fgetc(f);
}

static inline int fy_putc(int c, fy_FILE *f)
{
    unsigned char *p = f->wpos;
    if (__builtin_expect((p < f->wend) & (__libc_single_threaded != 0), 1)) {
        f->wpos = p + 1;
        return *p = (unsigned char)c;
    }
    return fy_fputc(c, f);
}

/* getline and getdelim: when the whole line is in the read window and the
 * caller's buffer holds it, a memchr and a memcpy; else the library. */
static inline ssize_t fy_getdelim(char **line, size_t *cap, int delim, fy_FILE *f)
{
    unsigned char *p = f->rpos;
    if (__builtin_expect(__libc_single_threaded != 0, 1) && line && cap && *line &&
        p < f->rend) {
        unsigned char *e = (unsigned char *)__builtin_memchr(p, delim, (size_t)(f->rend - p));
        if (e && (size_t)(e - p) + 1 < *cap) {
            size_t n = (size_t)(e - p) + 1;
            __builtin_memcpy(*line, p, n);
            (*line)[n] = 0;
            f->rpos = p + n;
            return (ssize_t)n;
        }
    }
    return fy__getdelim(line, cap, delim, f);
}

static inline ssize_t fy_getline(char **line, size_t *cap, fy_FILE *f)
{
    return fy_getdelim(line, cap, '\n', f);
}

/* fputs: a copy into the write window when the string fits there. */
static inline int fy_fputs(const char *s, fy_FILE *f)
{
    size_t n = __builtin_strlen(s);
    if (__builtin_expect(__libc_single_threaded != 0, 1) && n - 1 < (size_t)(f->wend - f->wpos)) {
        __builtin_memcpy(f->wpos, s, n);
        f->wpos += n;
        return 1;
    }
    return fy__fputs(s, f);
}

/* fread and fwrite: a memcpy out of the read window, or into the write
 * window, when the request fits there (one thread); else the library.
 * A size * n past PTRDIFF_MAX (or overflowing) names no buffer: 0, errno
 * EFAULT and the error flag, with nothing read or written (glibc
 * multiplies modulo 2^64 and read(2) or write(2) then fail so). */
static inline size_t fy_fread(void *ptr, size_t size, size_t n, fy_FILE *f)
{
    size_t len;
    if (__builtin_expect(__libc_single_threaded, 1) && !__builtin_mul_overflow(size, n, &len) &&
        len - 1 < (size_t)(f->rend - f->rpos)) {
        __builtin_memcpy(ptr, f->rpos, len);
        f->rpos += len;
        return n;
    }
    return fy__fread(ptr, size, n, f);
}

static inline size_t fy_fwrite(const void *ptr, size_t size, size_t n, fy_FILE *f)
{
    size_t len;
    if (__builtin_expect(__libc_single_threaded, 1) && !__builtin_mul_overflow(size, n, &len) &&
        len - 1 < (size_t)(f->wend - f->wpos)) {
        __builtin_memcpy(f->wpos, ptr, len);
        f->wpos += len;
        return n;
    }
    return fy__fwrite(ptr, size, n, f);
}

static inline int fy_getchar(void) { return fy_getc(fy_stdin); }
static inline int fy_putchar(int c) { return fy_putc(c, fy_stdout); }
static inline int fy_getchar_unlocked(void) { return fy_getc_unlocked(fy_stdin); }
static inline int fy_putchar_unlocked(int c) { return fy_putc_unlocked(c, fy_stdout); }
static inline int fy_fgetc_unlocked(fy_FILE *f) { return fy_getc_unlocked(f); }
static inline int fy_fputc_unlocked(int c, fy_FILE *f) { return fy_putc_unlocked(c, f); }
int fy_feof_unlocked(fy_FILE *f);
int fy_ferror_unlocked(fy_FILE *f);
void fy_clearerr_unlocked(fy_FILE *f);
int fy_fileno_unlocked(fy_FILE *f);

/* <stdio_ext.h> on ferry's FILE (glibc's functions would read a ferry
 * FILE as a glibc one). Nonzero answers are 1. __fbufsize is 0 before
 * the first use, 1 when unbuffered, else ferry's buffer size (128 KiB);
 * __fsetlocking records and reports BYCALLER, but ferry's calls keep
 * locking the stream (its lock is reentrant: flockfile around them is
 * fine). */
size_t fy___fbufsize(fy_FILE *f);
int fy___freading(fy_FILE *f);
int fy___fwriting(fy_FILE *f);
int fy___freadable(fy_FILE *f);
int fy___fwritable(fy_FILE *f);
int fy___flbf(fy_FILE *f);
void fy___fpurge(fy_FILE *f);
size_t fy___fpending(fy_FILE *f);
void fy__flushlbf(void);
int fy___fsetlocking(fy_FILE *f, int type);

#ifdef __cplusplus
}
#endif

/* The renaming. */
#undef FILE
#define FILE fy_FILE
#undef stdin
#define stdin fy_stdin
#undef stdout
#define stdout fy_stdout
#undef stderr
#define stderr fy_stderr
#undef fopen
#define fopen fy_fopen
#undef fdopen
#define fdopen fy_fdopen
#undef freopen
#define freopen fy_freopen
#undef fclose
#define fclose fy_fclose
#undef fileno
#define fileno fy_fileno
#undef fileno_unlocked
#define fileno_unlocked fy_fileno_unlocked
#undef tmpfile
#define tmpfile fy_tmpfile
#undef popen
#define popen fy_popen
#undef pclose
#define pclose fy_pclose
#undef fmemopen
#define fmemopen fy_fmemopen
#undef open_memstream
#define open_memstream fy_open_memstream
#undef fread
#define fread fy_fread
#undef fwrite
#define fwrite fy_fwrite
#undef fread_unlocked
#define fread_unlocked fy_fread_unlocked
#undef fwrite_unlocked
#define fwrite_unlocked fy_fwrite_unlocked
#undef fgetc
#define fgetc fy_fgetc
#undef getc
#define getc fy_getc
#undef getchar
#define getchar fy_getchar
#undef fputc
#define fputc fy_fputc
#undef putc
#define putc fy_putc
#undef putchar
#define putchar fy_putchar
#undef getc_unlocked
#define getc_unlocked fy_getc_unlocked
#undef getchar_unlocked
#define getchar_unlocked fy_getchar_unlocked
#undef putc_unlocked
#define putc_unlocked fy_putc_unlocked
#undef putchar_unlocked
#define putchar_unlocked fy_putchar_unlocked
#undef fgetc_unlocked
#define fgetc_unlocked fy_fgetc_unlocked
#undef fputc_unlocked
#define fputc_unlocked fy_fputc_unlocked
#undef ungetc
#define ungetc fy_ungetc
#undef fgets
#define fgets fy_fgets
#undef fgets_unlocked
#define fgets_unlocked fy_fgets_unlocked
#undef fputs
#define fputs fy_fputs
#undef fputs_unlocked
#define fputs_unlocked fy_fputs_unlocked
#undef puts
#define puts fy_puts
#undef getline
#define getline fy_getline
#undef getdelim
#define getdelim fy_getdelim
#undef fprintf
#define fprintf fy_fprintf
#undef printf
#define printf fy_printf
#undef vfprintf
#define vfprintf fy_vfprintf
#undef vprintf
#define vprintf fy_vprintf
#undef dprintf
#define dprintf fy_dprintf
#undef vdprintf
#define vdprintf fy_vdprintf
#undef fscanf
#define fscanf fy_fscanf
#undef scanf
#define scanf fy_scanf
#undef vfscanf
#define vfscanf fy_vfscanf
#undef vscanf
#define vscanf fy_vscanf
#undef fseek
#define fseek fy_fseek
#undef fseeko
#define fseeko fy_fseeko
#undef ftell
#define ftell fy_ftell
#undef ftello
#define ftello fy_ftello
#undef rewind
#define rewind fy_rewind
#undef fgetpos
#define fgetpos fy_fgetpos
#undef fsetpos
#define fsetpos fy_fsetpos
#undef fflush
#define fflush fy_fflush
#undef fflush_unlocked
#define fflush_unlocked fy_fflush_unlocked
#undef feof
#define feof fy_feof
#undef ferror
#define ferror fy_ferror
#undef clearerr
#define clearerr fy_clearerr
#undef feof_unlocked
#define feof_unlocked fy_feof_unlocked
#undef ferror_unlocked
#define ferror_unlocked fy_ferror_unlocked
#undef clearerr_unlocked
#define clearerr_unlocked fy_clearerr_unlocked
#undef setvbuf
#define setvbuf fy_setvbuf
#undef setbuf
#define setbuf fy_setbuf
#undef setbuffer
#define setbuffer fy_setbuffer
#undef setlinebuf
#define setlinebuf fy_setlinebuf
#undef perror
#define perror fy_perror
#undef flockfile
#define flockfile fy_flockfile
#undef funlockfile
#define funlockfile fy_funlockfile
#undef ftrylockfile
#define ftrylockfile fy_ftrylockfile
#undef __fbufsize
#define __fbufsize fy___fbufsize
#undef __freading
#define __freading fy___freading
#undef __fwriting
#define __fwriting fy___fwriting
#undef __freadable
#define __freadable fy___freadable
#undef __fwritable
#define __fwritable fy___fwritable
#undef __flbf
#define __flbf fy___flbf
#undef __fpurge
#define __fpurge fy___fpurge
#undef __fpending
#define __fpending fy___fpending
#undef _flushlbf
#define _flushlbf fy__flushlbf
#undef __fsetlocking
#define __fsetlocking fy___fsetlocking

#endif
