//! `posix_spawn(3)`: a program started without a `fork` — glibc clones
//! with `CLONE_VM | CLONE_VFORK` and execs at once, so the fork handlers
//! (`fork.rs`: a private copy of every ipc pool this process maps, made
//! in the child while the parent waits) do not run for a child that
//! would throw their work away at `exec`.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

/// What the child gets.
pub(crate) struct SpawnSpec<'a> {
    pub program: &'a CString,
    pub argv: &'a [CString],
    pub envp: &'a [CString],
    pub cwd: Option<&'a CString>,
    /// Descriptors to place at 0, 1 and 2 (None: inherited).
    pub stdio: [Option<RawFd>; 3],
    /// In a process group of its own.
    pub new_group: bool,
}

/// Owns a `posix_spawn_file_actions_t` and a `posix_spawnattr_t`.
struct Actions {
    fa: libc::posix_spawn_file_actions_t,
    attr: libc::posix_spawnattr_t,
}

impl Drop for Actions {
    fn drop(&mut self) {
        // SAFETY: both were initialised (Actions is made only after both
        // inits succeeded) and are destroyed once.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut self.fa);
            libc::posix_spawnattr_destroy(&mut self.attr);
        }
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// Starts the program; its process id.
pub(crate) fn spawn(s: &SpawnSpec<'_>) -> io::Result<libc::pid_t> {
    let mut argv: Vec<*mut libc::c_char> = s.argv.iter().map(|a| a.as_ptr().cast_mut()).collect();
    argv.push(std::ptr::null_mut());
    let mut envp: Vec<*mut libc::c_char> = s.envp.iter().map(|a| a.as_ptr().cast_mut()).collect();
    envp.push(std::ptr::null_mut());
    // SAFETY: zeroed storage for the two opaque structures, initialised by
    // their init calls before any other use.
    let mut a: Actions = unsafe { std::mem::zeroed() };
    // SAFETY: initialises the file actions in place.
    check(unsafe { libc::posix_spawn_file_actions_init(&mut a.fa) })?;
    // SAFETY: initialises the attributes in place.
    if let Err(e) = check(unsafe { libc::posix_spawnattr_init(&mut a.attr) }) {
        // SAFETY: the file actions were initialised just above.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut a.fa) };
        std::mem::forget(a);
        return Err(e);
    }
    for (target, fd) in s.stdio.iter().enumerate() {
        if let Some(fd) = fd {
            // SAFETY: initialised file actions; dup2 of a descriptor the
            // caller keeps open until the spawn returns.
            check(unsafe {
                libc::posix_spawn_file_actions_adddup2(&mut a.fa, *fd, target as libc::c_int)
            })?;
        }
    }
    if let Some(dir) = s.cwd {
        // SAFETY: initialised file actions; the path is copied by glibc.
        check(unsafe { libc::posix_spawn_file_actions_addchdir_np(&mut a.fa, dir.as_ptr()) })?;
    }
    let mut flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
    if s.new_group {
        flags |= libc::POSIX_SPAWN_SETPGROUP;
        // SAFETY: initialised attributes; 0: the child's own pid as group.
        check(unsafe { libc::posix_spawnattr_setpgroup(&mut a.attr, 0) })?;
    }
    // SAFETY: sigset_t storage filled by sigemptyset / sigaddset.
    let mut none: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut pipe: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid sigset_t pointers; the calls only write them.
    unsafe {
        libc::sigemptyset(&mut none);
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
    }
    // The child starts with no signal blocked and SIGPIPE at its default
    // (a server ignores SIGPIPE; a program it runs should not inherit it).
    // SAFETY: initialised attributes and sigsets.
    unsafe {
        check(libc::posix_spawnattr_setsigmask(&mut a.attr, &none))?;
        check(libc::posix_spawnattr_setsigdefault(&mut a.attr, &pipe))?;
        check(libc::posix_spawnattr_setflags(
            &mut a.attr,
            flags as libc::c_short,
        ))?;
    }
    let mut pid: libc::pid_t = 0;
    // SAFETY: a NUL-terminated program path, NULL-terminated argv and envp
    // arrays of NUL-terminated strings that outlive the call, initialised
    // file actions and attributes.
    let rc = unsafe {
        libc::posix_spawn(
            &mut pid,
            s.program.as_ptr(),
            &a.fa,
            &a.attr,
            argv.as_ptr(),
            envp.as_ptr(),
        )
    };
    check(rc)?;
    Ok(pid)
}
