//! The read path: the current read buffer, `salloc` in read mode,
//! `fill_buf`, lines, and copies into a caller's buffer.

use super::*;

/// The most one `read` or `pread` transfers on Linux (`MAX_RW_COUNT`): a
/// read that returns this much of a larger request is not short.
const MAX_READ: usize = 0x7fff_f000;

impl Inner {
    /// The current read buffer's unread bytes at `pos`: (slot, offset in
    /// buffer, bytes available, buffer ends at end of file).
    #[inline]
    pub(super) fn read_window(&self) -> Option<(u32, usize, usize, bool)> {
        let rc = &self.rc;
        let at = self.pos.wrapping_sub(rc.off);
        if rc.slot != NO_SLOT && at <= rc.len as u64 {
            let at = at as usize;
            return Some((rc.slot, at, rc.len - at, rc.eof));
        }
        None
    }

    /// Makes `slot` (a read buffer) the current one.
    pub(super) fn set_rcur(&mut self, slot: u32) {
        if let Data::Read { buf, off, eof } = &self.slots[slot as usize].data {
            self.rc = ReadCur {
                slot,
                base: buf.as_ptr(),
                off: *off,
                len: buf.len(),
                eof: *eof,
                leases: 0,
            };
        }
    }

    pub(super) fn read_ptr(&self, slot: u32, at: usize) -> NonNull<u8> {
        match &self.slots[slot as usize].data {
            // (no unsafe) pointer arithmetic inside a live Buf.
            Data::Read { buf, .. } => NonNull::from(&buf[at..]).cast(),
            _ => unreachable!("read lease on a non-read buffer"),
        }
    }

    /// Makes the current read buffer start at `pos` and hold at least `min`
    /// bytes, unless the file ends first. Sequential sources keep the
    /// unread tail of the old buffer (it cannot be read again).
    pub(super) fn fill(&mut self, min: usize) -> io::Result<()> {
        self.resume()?;
        if self.mode != Mode::Read {
            self.set_mode(Mode::Read)?;
        }
        let tail: Option<Buf> = if self.io.positional() {
            None
        } else {
            self.read_window()
                .map(|(c, at, avail, _)| match &self.slots[c as usize].data {
                    Data::Read { buf, .. } => buf.slice(at..at + avail),
                    _ => Buf::new(),
                })
        };
        let keep = tail.as_ref().map_or(0, |t| t.len());
        // A window is the whole read buffer: a sequential source's unread
        // tail would be lost with it, so only without one.
        if keep == 0 {
            if let Some(w) = self.io.window(self.pos, min) {
                let w = w.map_err(|e| self.err("mapping", e))?;
                self.retire_read();
                let slot = self.new_slot(Data::Read {
                    buf: w.buf,
                    off: self.pos,
                    eof: w.eof,
                });
                self.set_rcur(slot);
                return Ok(());
            }
        }
        let mut want = min.max(self.bufsize).max(keep.saturating_add(1));
        if want > self.bufsize && self.io.positional() {
            // No more than the file holds (plus a byte to see its end): a
            // huge request on a small file allocates what it can return.
            // (Asked again only once reading has reached the size last
            // seen: one `fstat` per read cost 2,066 of the 4,300 system
            // calls of a `ferry cmp` of two 256 MiB files, and one before
            // the only read of a small file, a fifth of its calls.)
            if self.pos >= self.size_seen {
                self.size_seen = self.io.size().map_err(|e| self.err("reading", e))?;
            }
            let left = self.size_seen.saturating_sub(self.pos);
            want = want.min(
                usize::try_from(left)
                    .unwrap_or(usize::MAX)
                    .saturating_add(1),
            );
        }
        let size = want
            .checked_next_multiple_of(4096)
            .ok_or_else(|| self.err("reading", too_large(want)))?;
        let mut m = alloc_buf(size).map_err(|e| self.err("reading", e))?;
        if let Some(t) = &tail {
            m.extend_from_slice(t);
        }
        let start = self.pos;
        let mut eof = false;
        while m.len() < min.max(1) {
            if m.tail_room() == 0 {
                // Only a positional read's buffer, cut to the size last
                // seen, fills before `min`: the file grew since. Asked
                // again, and the buffer grown to what it holds now (never
                // a region short of what the file has).
                self.size_seen = self.io.size().map_err(|e| self.err("reading", e))?;
                let have = start.saturating_add(m.len() as u64);
                let left =
                    usize::try_from(self.size_seen.saturating_sub(have)).unwrap_or(usize::MAX);
                // At least double: a file whose size says nothing (/proc:
                // 0) grows the buffer geometrically, not a page a read.
                let more = left.saturating_add(1).max(m.len()).min(min - m.len());
                let size = m
                    .len()
                    .checked_add(more)
                    .and_then(|n| n.checked_next_multiple_of(4096))
                    .ok_or_else(|| self.err("reading", too_large(usize::MAX)))?;
                let mut bigger = alloc_buf(size).map_err(|e| self.err("reading", e))?;
                bigger.extend_from_slice(&m);
                m = bigger;
            }
            let off = start + m.len() as u64;
            let asked = m.tail_room().min(MAX_READ);
            let n = self
                .io
                .read(off, m.spare_capacity_mut())
                .map_err(|e| named("reading", &self.name, e))?;
            m.commit(n);
            // A short positional read that reaches the size the file gave
            // is its end (for now): no second read to hear it say 0. One
            // that falls short of it, or of a file whose size says nothing
            // (/proc, /sys: 0, or a page; their reads stop at a page of
            // records), is read on until a read says 0.
            if n == 0 || (n < asked && self.reached_size(start, m.len())) {
                eof = true;
                break;
            }
        }
        if !eof && m.len() < m.capacity() && self.reached_size(start, m.len()) {
            eof = true;
        }
        self.retire_read();
        let slot = self.new_slot(Data::Read {
            buf: m.freeze(),
            off: start,
            eof,
        });
        self.set_rcur(slot);
        Ok(())
    }

    /// Whether a positional read of `len` bytes from `start` reached the
    /// size last seen: a short read there is the file's end. Never for a
    /// size of 0 (a file whose size says nothing of its contents).
    fn reached_size(&self, start: u64, len: usize) -> bool {
        self.io.positional()
            && self.size_seen > 0
            && start.saturating_add(len as u64) >= self.size_seen
    }

    /// The current read buffer stops being current; freed if nothing points
    /// into it.
    pub(super) fn retire_read(&mut self) {
        let rc = std::mem::replace(&mut self.rc, NO_READ);
        if rc.slot != NO_SLOT {
            let s = &mut self.slots[rc.slot as usize];
            s.leases += rc.leases;
            if s.leases == 0 {
                self.release_slot(rc.slot);
            }
        }
    }

    /// `salloc` in read mode: up to `len` bytes at `pos` (fewer only at end
    /// of file), the offset advanced past them.
    #[inline]
    pub(crate) fn salloc_read(&mut self, len: usize) -> io::Result<ReadLease> {
        if self.mode == Mode::Read && !(self.io.is_mapped() && fault_count() != self.seen_faults) {
            let rc = &mut self.rc;
            let at = self.pos.wrapping_sub(rc.off);
            if rc.slot != NO_SLOT && at <= rc.len as u64 && rc.len as u64 - at >= len as u64 {
                rc.leases += 1;
                let offset = self.pos;
                self.pos += len as u64;
                return Ok(ReadLease {
                    // (no unsafe) `at <= len` keeps this inside the buffer;
                    // wrapping_add only avoids an unsafe block.
                    ptr: NonNull::new(rc.base.wrapping_add(at as usize) as *mut u8)
                        .unwrap_or(NonNull::dangling()),
                    len,
                    slot: rc.slot,
                    offset,
                });
            }
        }
        self.salloc_read_slow(len, true)
    }

    #[cold]
    pub(crate) fn salloc_read_slow(&mut self, len: usize, exact: bool) -> io::Result<ReadLease> {
        self.take_deferred()?;
        self.resume()?;
        if self.io.is_mapped() {
            self.check_damage()?;
        }
        if !self.can_read {
            return Err(self.err("reading", errno(libc::EBADF)));
        }
        if self.mode != Mode::Read {
            self.set_mode(Mode::Read)?;
        }
        if len == 0 {
            return Ok(ReadLease {
                ptr: NonNull::dangling(),
                len: 0,
                slot: NO_SLOT,
                offset: self.pos,
            });
        }
        // Short of `len`: read again from `pos` (the file may also have
        // grown since the buffer was filled).
        if let Some((c, at, avail, _)) = self.read_window() {
            if avail >= len || (avail > 0 && !exact) {
                return Ok(self.lend(c, at, avail.min(len)));
            }
        }
        self.fill(if exact { len } else { 1 })?;
        match self.read_window() {
            Some((c, at, avail, _)) if avail > 0 => {
                let n = avail.min(len);
                Ok(self.lend(c, at, n))
            }
            _ => Ok(ReadLease {
                ptr: NonNull::dangling(),
                len: 0,
                slot: NO_SLOT,
                offset: self.pos,
            }),
        }
    }

    #[inline]
    pub(super) fn lend(&mut self, c: u32, at: usize, n: usize) -> ReadLease {
        debug_assert_eq!(c, self.rc.slot, "leases come from the current buffer");
        self.rc.leases += 1;
        let offset = self.pos;
        self.pos += n as u64;
        ReadLease {
            ptr: self.read_ptr(c, at),
            len: n,
            slot: c,
            offset,
        }
    }

    /// `sfree` of a read region.
    #[inline(always)]
    pub(crate) fn free_read(&mut self, slot: u32) {
        if slot == NO_SLOT {
            return;
        }
        if slot == self.rc.slot {
            self.rc.leases -= 1;
            return;
        }
        let s = &mut self.slots[slot as usize];
        s.leases -= 1;
        if s.leases == 0 {
            self.release_slot(slot);
        }
    }

    /// True if the buffer a read lease points into lost pages (mapped file
    /// shrank).
    pub(crate) fn lease_damaged(&self, slot: u32) -> bool {
        match self.slots.get(slot as usize).map(|s| &s.data) {
            Some(Data::Read { buf, .. }) => !buf.known_intact(),
            _ => false,
        }
    }

    /// The error for a damaged lease.
    pub(crate) fn damage_error(&self) -> io::Error {
        self.shrank()
    }

    /// The bytes of a read lease as a `Buf` that outlives it (no copy).
    pub(crate) fn lease_buf(&self, slot: u32, ptr: NonNull<u8>, len: usize) -> Buf {
        if slot == NO_SLOT {
            return Buf::new();
        }
        match &self.slots[slot as usize].data {
            Data::Read { buf, .. } => {
                let at = ptr.as_ptr() as usize - buf.as_ptr() as usize;
                buf.slice(at..at + len)
            }
            _ => unreachable!("read lease on a non-read buffer"),
        }
    }

    /// `BufRead::fill_buf`: the unread bytes of the current buffer (filling
    /// it if empty). Valid until the next call on the stream.
    #[inline]
    pub(crate) fn fill_buf(&mut self) -> io::Result<(NonNull<u8>, usize)> {
        // Fast path: unread bytes in the current read buffer, nothing
        // deferred, no new fault anywhere in ferry's mappings.
        if self.mode == Mode::Read
            && self.deferred.is_none()
            && (!self.io.is_mapped() || fault_count() == self.seen_faults)
        {
            let rc = &self.rc;
            let at = self.pos.wrapping_sub(rc.off);
            if rc.slot != NO_SLOT && at < rc.len as u64 {
                // SAFETY: `at < len`: inside the current read buffer, which
                // `base` points at and which lives while it is current.
                let p = unsafe { rc.base.add(at as usize) };
                return Ok((
                    NonNull::new(p.cast_mut()).unwrap_or(NonNull::dangling()),
                    rc.len - at as usize,
                ));
            }
        }
        self.fill_buf_slow()
    }

    #[inline(never)]
    fn fill_buf_slow(&mut self) -> io::Result<(NonNull<u8>, usize)> {
        self.take_deferred()?;
        self.resume()?;
        if self.io.is_mapped() {
            self.check_damage()?;
        }
        if self.mode != Mode::Read || self.read_window().is_none_or(|w| w.2 == 0) {
            if !self.can_read {
                return Err(self.err("reading", errno(libc::EBADF)));
            }
            self.fill(1)?;
        }
        match self.read_window() {
            Some((c, at, avail, _)) if avail > 0 => Ok((self.read_ptr(c, at), avail)),
            _ => Ok((NonNull::dangling(), 0)),
        }
    }

    /// Bytes read ahead of `pos` and still buffered (0 unless reading).
    pub(crate) fn buffered_read(&self) -> usize {
        if self.mode != Mode::Read || self.lent {
            return 0;
        }
        self.read_window().map_or(0, |w| w.2)
    }

    /// `BufRead::consume`.
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) {
        let avail = self.read_window().map_or(0, |w| w.2);
        self.pos += n.min(avail) as u64;
    }

    /// `Read::read`: copies what is buffered, or reads once. Large reads
    /// with nothing buffered go straight into the caller's buffer.
    pub(crate) fn read_into(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.mode == Mode::Read {
            if let Some((c, at, avail, _)) = self.read_window() {
                if avail > 0 {
                    let n = avail.min(out.len());
                    if let Data::Read { buf, .. } = &self.slots[c as usize].data {
                        out[..n].copy_from_slice(&buf[at..at + n]);
                    }
                    if self.copied_lost(c) {
                        return Err(self.lost_in_copy());
                    }
                    self.pos += n as u64;
                    return Ok(n);
                }
            }
        }
        self.take_deferred()?;
        self.resume()?;
        if !self.can_read {
            return Err(self.err("reading", errno(libc::EBADF)));
        }
        if self.mode != Mode::Read {
            self.set_mode(Mode::Read)?;
        }
        if out.len() >= self.bufsize {
            self.retire_read();
            let n = self
                .io
                .read(self.pos, out)
                .map_err(|e| named("reading", &self.name, e))?;
            self.pos += n as u64;
            return Ok(n);
        }
        let lease = self.salloc_read_slow(out.len(), false)?;
        let n = lease.len;
        if n > 0 {
            if let Data::Read { buf, .. } = &self.slots[lease.slot as usize].data {
                let at = lease.ptr.as_ptr() as usize - buf.as_ptr() as usize;
                out[..n].copy_from_slice(&buf[at..at + n]);
            }
        }
        let lost = self.copied_lost(lease.slot);
        self.free_read(lease.slot);
        if lost {
            self.pos = lease.offset;
            return Err(self.lost_in_copy());
        }
        Ok(n)
    }

    /// After bytes were copied out of read buffer `slot`: true if it is a
    /// mapped window that lost pages (the file shrank or was emptied
    /// under it), which the copy may have read as zeros — not the file's
    /// bytes. One load unless a mapping lost pages since the last look.
    #[inline]
    fn copied_lost(&self, slot: u32) -> bool {
        self.io.is_mapped() && fault_count() != self.seen_faults && self.lease_damaged(slot)
    }

    /// The error for a copy out of a window that lost pages; the window
    /// is no longer used (as [`Inner::check_damage`] does).
    #[cold]
    fn lost_in_copy(&mut self) -> io::Error {
        self.seen_faults = fault_count();
        self.retire_read();
        self.shrank()
    }

    /// [`Inner::read_into`] for memory not yet initialized (`read_to_end`'s
    /// spare capacity): returns `n`, and the first `n` bytes of `out` are
    /// then initialized. Large reads go straight from the file.
    pub(crate) fn read_into_uninit(
        &mut self,
        out: &mut [std::mem::MaybeUninit<u8>],
    ) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.mode == Mode::Read {
            if let Some((c, at, avail, _)) = self.read_window() {
                if avail > 0 {
                    let n = avail.min(out.len());
                    if let Data::Read { buf, .. } = &self.slots[c as usize].data {
                        for (o, &b) in out[..n].iter_mut().zip(&buf[at..at + n]) {
                            o.write(b);
                        }
                    }
                    if self.copied_lost(c) {
                        return Err(self.lost_in_copy());
                    }
                    self.pos += n as u64;
                    return Ok(n);
                }
            }
        }
        if out.len() < self.bufsize {
            for o in out.iter_mut() {
                o.write(0);
            }
            // SAFETY: every byte of `out` was just initialized.
            let init = unsafe { &mut *(out as *mut [std::mem::MaybeUninit<u8>] as *mut [u8]) };
            return self.read_into(init);
        }
        self.take_deferred()?;
        self.resume()?;
        if !self.can_read {
            return Err(self.err("reading", errno(libc::EBADF)));
        }
        if self.mode != Mode::Read {
            self.set_mode(Mode::Read)?;
        }
        self.retire_read();
        let n = self
            .io
            .read_uninit(self.pos, out)
            .map_err(|e| named("reading", &self.name, e))?;
        self.pos += n as u64;
        Ok(n)
    }

    /// The next line (with its `\n`, if any) at `pos`, as (slot, offset,
    /// length) in the current buffer; the buffer grows for long lines.
    #[inline]
    pub(crate) fn next_line(&mut self) -> io::Result<Option<(u32, usize, usize)>> {
        // Fast path: the line ends inside the current buffer.
        if self.mode == Mode::Read && !(self.io.is_mapped() && fault_count() != self.seen_faults) {
            let rc = &self.rc;
            let at = self.pos.wrapping_sub(rc.off);
            if rc.slot != NO_SLOT && at < rc.len as u64 {
                let at = at as usize;
                // SAFETY: `at < len`: the bytes are inside the current read
                // buffer, which the slot keeps alive and unchanged.
                let rest = unsafe { std::slice::from_raw_parts(rc.base.add(at), rc.len - at) };
                if let Some(i) = memchr::memchr(b'\n', rest) {
                    self.pos += (i + 1) as u64;
                    return Ok(Some((rc.slot, at, i + 1)));
                }
            }
        }
        self.next_line_slow()
    }

    #[cold]
    fn next_line_slow(&mut self) -> io::Result<Option<(u32, usize, usize)>> {
        self.resume()?;
        if self.io.is_mapped() {
            self.check_damage()?;
        }
        // Bytes at `pos` already known to hold no newline.
        let mut searched = 0usize;
        loop {
            if self.mode == Mode::Read {
                if let Some((c, at, avail, eof)) = self.read_window() {
                    let rest =
                        self.read_bytes(c, at + searched.min(avail), avail - searched.min(avail));
                    if let Some(i) = memchr::memchr(b'\n', rest) {
                        let n = searched + i + 1;
                        self.pos += n as u64;
                        return Ok(Some((c, at, n)));
                    }
                    searched = avail;
                    if eof && avail > 0 {
                        self.pos += avail as u64;
                        return Ok(Some((c, at, avail)));
                    }
                }
            }
            self.take_deferred()?;
            if !self.can_read {
                return Err(self.err("reading", errno(libc::EBADF)));
            }
            // Twice what was searched: a long line costs a linear amount of
            // reading and copying in all, not one more buffer per round
            // (quadratic: a hostile 64 MiB line took 14 s).
            self.fill(searched.saturating_mul(2).max(searched + self.bufsize))?;
            let Some((c, at, avail, _)) = self.read_window() else {
                return Ok(None);
            };
            if avail == 0 {
                return Ok(None);
            }
            if avail <= searched {
                // Nothing new arrived: the last line has no newline.
                self.pos += avail as u64;
                return Ok(Some((c, at, avail)));
            }
        }
    }

    /// The bytes of the current read buffer at (slot, offset, length).
    #[inline]
    pub(crate) fn read_bytes(&self, slot: u32, at: usize, len: usize) -> &[u8] {
        if slot == self.rc.slot && slot != NO_SLOT {
            // SAFETY: (slot, at, len) came from this buffer (next_line), which
            // is current and so alive.
            return unsafe { std::slice::from_raw_parts(self.rc.base.add(at), len) };
        }
        self.read_bytes_slow(slot, at, len)
    }

    fn read_bytes_slow(&self, slot: u32, at: usize, len: usize) -> &[u8] {
        match self.slots.get(slot as usize).map(|s| &s.data) {
            Some(Data::Read { buf, .. }) => &buf[at..at + len],
            _ => &[],
        }
    }

    pub(crate) fn read_buf(&self, slot: u32, at: usize, len: usize) -> Buf {
        match self.slots.get(slot as usize).map(|s| &s.data) {
            Some(Data::Read { buf, .. }) => buf.slice(at..at + len),
            _ => Buf::new(),
        }
    }

    /// `fill_buf` with at least `min` unread bytes in the current buffer,
    /// unless the stream ends first (then what is left; empty at the end).
    pub(crate) fn fill_buf_min(&mut self, min: usize) -> io::Result<(NonNull<u8>, usize)> {
        let (p, n) = self.fill_buf()?;
        if n >= min || n == 0 {
            return Ok((p, n));
        }
        if self.read_window().is_some_and(|w| w.3) {
            return Ok((p, n)); // the buffer already ends at end of file
        }
        self.fill(min)?;
        match self.read_window() {
            Some((c, at, avail, _)) if avail > 0 => Ok((self.read_ptr(c, at), avail)),
            _ => Ok((NonNull::dangling(), 0)),
        }
    }
}
