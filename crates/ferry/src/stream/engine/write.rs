//! The write queue: regions in allocation order, write buffers, room to
//! write in place, draining committed bytes to the file, closing.

use super::*;

impl Inner {
    /// `salloc` in write mode: a writable region of exactly `len` bytes at
    /// `pos`, the offset advanced past it.
    pub(crate) fn salloc_write(&mut self, len: usize) -> io::Result<WriteLease> {
        self.take_deferred()?;
        self.resume()?;
        if !self.can_write {
            return Err(self.err("writing", errno(libc::EBADF)));
        }
        if self.mode != Mode::Write {
            self.set_mode(Mode::Write)?;
        }
        // Appending: a region starts at the end (a seek may have moved the
        // offset; with buffered bytes pending and no seek, it is already
        // there and the size need not be asked).
        if self.append
            && self.wq.is_empty()
            && (self.wbufs.is_empty() || self.pos != self.committed_end)
        {
            self.pos = self.len()?;
        }
        if end_of(self.pos, len).is_none() {
            return Err(self.err("writing", errno(libc::EFBIG)));
        }
        let slot = self.write_room(len)?;
        let Data::Write(w) = &mut self.slots[slot as usize].data else {
            unreachable!("write slot holds a write buffer")
        };
        let start = w.used;
        w.used += len;
        // (no unsafe) `start + len <= cap` was ensured by write_room.
        let ptr = NonNull::new(w.ptr.as_ptr().wrapping_add(start)).unwrap_or(w.ptr);
        self.slots[slot as usize].leases += 1;
        let offset = self.pos;
        self.pos += len as u64;
        let seq = self.wseq + self.wq.len() as u64;
        self.wq.push_back(WReg {
            slot,
            start,
            end: start + len,
            freed: false,
        });
        Ok(WriteLease {
            ptr,
            len,
            seq,
            offset,
        })
    }

    /// The current write buffer if `len` more bytes fit at `pos`, else a new
    /// one (the old one waits its turn to be written).
    pub(super) fn write_room(&mut self, len: usize) -> io::Result<u32> {
        if let Some(c) = self.wcur {
            if let Data::Write(w) = &self.slots[c as usize].data {
                if w.off + w.used as u64 == self.pos && len <= w.cap - w.used {
                    return Ok(c);
                }
            }
        }
        let want = len.max(self.bufsize);
        let mut mem = match self.spare_write.take() {
            Some(m) if m.capacity() >= want => m,
            _ => alloc_buf(want).map_err(|e| self.err("writing", e))?,
        };
        self.wcur = None;
        let cap = mem.capacity();
        let ptr =
            NonNull::new(mem.spare_capacity_mut().as_mut_ptr()).unwrap_or(NonNull::dangling());
        let slot = self.new_slot(Data::Write(WriteBuf {
            _mem: mem,
            ptr,
            cap,
            off: self.pos,
            used: 0,
            committed: 0,
            written: 0,
        }));
        self.wbufs.push_back(slot);
        self.wcur = Some(slot);
        // The old buffer may now be complete: write what can be written.
        if let Err(e) = self.drain(false) {
            self.deferred.get_or_insert(e);
        }
        Ok(slot)
    }

    /// `sfree` of a write region: its bytes are committed (once every
    /// region allocated before it is freed too) and may reach the file.
    pub(crate) fn free_write(&mut self, seq: u64) -> io::Result<()> {
        let Some(i) = seq.checked_sub(self.wseq) else {
            return Ok(());
        };
        let Some(r) = self.wq.get_mut(i as usize) else {
            return Ok(());
        };
        r.freed = true;
        let slot = r.slot;
        self.slots[slot as usize].leases -= 1;
        let mut complete_old = false;
        while self.wq.front().is_some_and(|r| r.freed) {
            let Some(r) = self.wq.pop_front() else { break };
            self.wseq += 1;
            if let Data::Write(w) = &mut self.slots[r.slot as usize].data {
                w.committed = w.committed.max(r.end);
                if r.end > r.start {
                    self.committed_end = self.committed_end.max(w.off + r.end as u64);
                }
                if self.wcur != Some(r.slot) && w.committed == w.used {
                    complete_old = true;
                }
            }
        }
        if self.mode == Mode::Read {
            // Freed while reading: write it out now, so reads see it.
            self.drain(true)?;
        } else if complete_old {
            self.drain(false)?;
        }
        Ok(())
    }

    /// Resizes the most recent write region (ASF's `srealloc`): the next
    /// allocation starts right after its new end. Returns its new pointer.
    pub(crate) fn realloc_write(&mut self, seq: u64, new_len: usize) -> io::Result<NonNull<u8>> {
        let last = self.wseq + self.wq.len() as u64;
        let is_last = last > 0 && seq == last - 1 && self.wq.back().is_some_and(|r| !r.freed);
        let r = match self.wq.back() {
            Some(r) if is_last && Some(r.slot) == self.wcur => (r.slot, r.start, r.end),
            _ => {
                return Err(self.err(
                    "resizing a region of",
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "only the most recent region can be resized",
                    ),
                ))
            }
        };
        let (slot, start, end) = r;
        let Data::Write(w) = &mut self.slots[slot as usize].data else {
            unreachable!("write region in a write buffer")
        };
        if w.off + end as u64 != self.pos {
            return Err(self.err(
                "resizing a region of",
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the stream moved since the region was allocated",
                ),
            ));
        }
        if end_of(w.off + start as u64, new_len).is_none() {
            return Err(self.err("resizing a region of", errno(libc::EFBIG)));
        }
        if new_len <= w.cap - start {
            w.used = start + new_len;
            let ptr = NonNull::new(w.ptr.as_ptr().wrapping_add(start)).unwrap_or(w.ptr);
            if let Some(b) = self.wq.back_mut() {
                b.end = start + new_len;
            }
            self.pos = w.off + (start + new_len) as u64;
            return Ok(ptr);
        }
        // Does not fit: move the region to a buffer of its own.
        let file_off = w.off + start as u64;
        let old_ptr = w.ptr.as_ptr().wrapping_add(start);
        let keep = end - start;
        let mut mem = match alloc_buf(new_len.max(self.bufsize)) {
            Ok(m) => m,
            Err(e) => return Err(self.err("resizing a region of", e)),
        };
        let Data::Write(w) = &mut self.slots[slot as usize].data else {
            unreachable!("write region in a write buffer")
        };
        w.used = start;
        let cap = mem.capacity();
        let ptr =
            NonNull::new(mem.spare_capacity_mut().as_mut_ptr()).unwrap_or(NonNull::dangling());
        // SAFETY: copying the region's own bytes (nobody else writes them:
        // the caller holds the region mutably) into a fresh buffer.
        unsafe { std::ptr::copy_nonoverlapping(old_ptr, ptr.as_ptr(), keep) };
        self.slots[slot as usize].leases -= 1;
        let new = self.new_slot(Data::Write(WriteBuf {
            _mem: mem,
            ptr,
            cap,
            off: file_off,
            used: new_len,
            committed: 0,
            written: 0,
        }));
        self.slots[new as usize].leases += 1;
        self.wbufs.push_back(new);
        self.wcur = Some(new);
        if let Some(b) = self.wq.back_mut() {
            b.slot = new;
            b.start = 0;
            b.end = new_len;
        }
        self.pos = file_off + new_len as u64;
        // The region has moved: it must get its new pointer whatever writing
        // out the old buffer meets (returning the error here left it on the
        // old buffer, which was then reused). The next call reports it.
        if let Err(e) = self.drain(false) {
            self.defer(e);
        }
        Ok(ptr)
    }

    /// The room left in the current write buffer at `pos`, for writing in
    /// place (nothing is reserved: bytes count once [`Inner::commit_space`]
    /// takes them). Empty in append mode and while write regions are
    /// outstanding: then bytes go through `write_from`.
    pub(crate) fn write_space(&mut self) -> io::Result<(NonNull<u8>, usize)> {
        self.take_deferred()?;
        if !self.can_write {
            return Err(self.err("writing", errno(libc::EBADF)));
        }
        if self.mode != Mode::Write {
            self.set_mode(Mode::Write)?;
        }
        if self.append || !self.wq.is_empty() {
            return Ok((NonNull::dangling(), 0));
        }
        if let Some(room) = self.space_now().filter(|r| r.1 > 0) {
            return Ok(room);
        }
        // A full (or no) buffer: start the next one with an empty region.
        let lease = self.salloc_write(1)?;
        self.realloc_write(lease.seq, 0)?;
        self.free_write(lease.seq)?;
        Ok(self.space_now().unwrap_or((NonNull::dangling(), 0)))
    }

    pub(super) fn space_now(&mut self) -> Option<(NonNull<u8>, usize)> {
        if self.mode != Mode::Write || self.append || !self.wq.is_empty() {
            return None;
        }
        let c = self.wcur?;
        match &self.slots[c as usize].data {
            Data::Write(w) if w.off + w.used as u64 == self.pos => Some((
                NonNull::new(w.ptr.as_ptr().wrapping_add(w.used)).unwrap_or(w.ptr),
                w.cap - w.used,
            )),
            _ => None,
        }
    }

    /// Takes the first `n` bytes of [`Inner::write_space`] as written.
    pub(crate) fn commit_space(&mut self, n: usize) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        match self.space_now() {
            Some((_, room)) if n <= room => {}
            _ => {
                return Err(self.err(
                    "writing",
                    io::Error::new(io::ErrorKind::InvalidInput, "commit beyond the write space"),
                ))
            }
        }
        if let Some(c) = self.wcur {
            if let Data::Write(w) = &mut self.slots[c as usize].data {
                w.used += n;
                w.committed = w.used;
                self.pos += n as u64;
                self.committed_end = self.committed_end.max(self.pos);
            }
        }
        Ok(())
    }

    /// `Write::write`: copies `data` into the current write buffer as a
    /// region freed at once; large writes with nothing pending go straight
    /// to the file.
    #[inline]
    pub(crate) fn write_from(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        if self.mode == Mode::Write && self.wq.is_empty() {
            if let Some(c) = self.wcur {
                if let Data::Write(w) = &mut self.slots[c as usize].data {
                    if w.off + w.used as u64 == self.pos
                        && w.used + data.len() <= w.cap
                        && !self.append
                    {
                        // SAFETY: `used..used+len` is inside the buffer and
                        // handed to no region (none is outstanding).
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                data.as_ptr(),
                                w.ptr.as_ptr().add(w.used),
                                data.len(),
                            )
                        };
                        w.used += data.len();
                        w.committed = w.used;
                        self.pos += data.len() as u64;
                        self.committed_end = self.committed_end.max(self.pos);
                        return Ok(data.len());
                    }
                }
            }
        }
        self.write_from_slow(data)
    }

    #[inline(never)]
    fn write_from_slow(&mut self, data: &[u8]) -> io::Result<usize> {
        self.take_deferred()?;
        self.resume()?;
        if !self.can_write {
            return Err(self.err("writing", errno(libc::EBADF)));
        }
        if self.mode != Mode::Write {
            self.set_mode(Mode::Write)?;
        }
        if data.len() >= self.bufsize && self.wq.is_empty() {
            self.write_out()?;
            let off = if self.append { None } else { Some(self.pos) };
            let (n, err) = self.io.write(off, data);
            if n > 0 {
                self.wrote(self.pos, n);
                self.pos = if self.append {
                    self.len()?
                } else {
                    self.pos + n as u64
                };
                self.committed_end = self.committed_end.max(self.pos);
            }
            return match err {
                Some(e) if n == 0 => Err(self.err("writing", e)),
                Some(e) => {
                    // Report the bytes that made it; the error comes next.
                    self.deferred = Some(self.err("writing", e));
                    Ok(n)
                }
                None => Ok(n),
            };
        }
        let lease = self.salloc_write(data.len())?;
        // SAFETY: the lease is ours alone: `len` writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), lease.ptr.as_ptr(), data.len()) };
        self.free_write(lease.seq)?;
        Ok(data.len())
    }

    /// Writes committed bytes to the file in allocation order. With `all`,
    /// the current buffer's committed prefix too; otherwise only buffers
    /// that are complete.
    pub(super) fn drain(&mut self, all: bool) -> io::Result<()> {
        while let Some(&s) = self.wbufs.front() {
            let current = self.wcur == Some(s);
            let Data::Write(w) = &mut self.slots[s as usize].data else {
                self.wbufs.pop_front();
                continue;
            };
            if !(all || (!current && w.committed == w.used)) {
                break;
            }
            if w.written < w.committed {
                // SAFETY: bytes `written..committed` belong to freed regions;
                // no region can write them any more.
                let bytes = unsafe {
                    std::slice::from_raw_parts(
                        w.ptr.as_ptr().add(w.written),
                        w.committed - w.written,
                    )
                };
                let at = w.off + w.written as u64;
                let off = if self.append { None } else { Some(at) };
                let (n, err) = self.io.write(off, bytes);
                w.written += n;
                if n > 0 {
                    self.wrote(at, n);
                }
                if let Some(e) = err {
                    return Err(named("writing", &self.name, e));
                }
            }
            let Data::Write(w) = &self.slots[s as usize].data else {
                break;
            };
            if w.written < w.used || current {
                // Regions still outstanding here (later buffers must wait),
                // or the buffer is still being filled.
                break;
            }
            self.wbufs.pop_front();
            if self.slots[s as usize].leases == 0 {
                // Written out and no region left in it: keep its memory
                // for the next write buffer.
                if let Data::Write(w) =
                    std::mem::replace(&mut self.slots[s as usize].data, Data::Empty)
                {
                    self.spare_write = Some(w._mem);
                }
                self.release_slot(s);
            }
        }
        Ok(())
    }

    /// Bytes `[at, at+n)` reached the file: a read buffer holding older
    /// bytes of that range stops being current (regions already handed out
    /// keep the bytes they saw).
    pub(super) fn wrote(&mut self, at: u64, n: usize) {
        let rc = self.rc;
        if rc.slot != NO_SLOT {
            let end = rc.off + rc.len as u64;
            let overlaps = at < end && at + n as u64 > rc.off;
            // A buffer that ended at end of file no longer does.
            let extends = rc.eof && at + n as u64 > end;
            if overlaps || extends || self.append {
                self.retire_read();
            }
        }
    }

    /// Writes every committed byte, in order (the descriptor's offset is
    /// not handed over: see `Inner::flush`).
    pub(super) fn write_out(&mut self) -> io::Result<()> {
        self.take_deferred()?;
        self.drain(true)
    }

    /// Drops the committed bytes a failed write left unwritten (C stdio's
    /// rule: the flush that failed reported them; glibc's `new_do_write`
    /// empties its buffer whatever `write` did). The offset goes back to
    /// where writing stopped. Buffers that write regions still point into
    /// are kept. Returns the bytes dropped.
    pub(crate) fn discard_unwritten(&mut self) -> u64 {
        self.deferred = None;
        if !self.wq.is_empty() {
            return 0;
        }
        let mut dropped = 0u64;
        let mut stop = None;
        for &s in &self.wbufs {
            if let Data::Write(w) = &mut self.slots[s as usize].data {
                if w.used > w.written {
                    stop.get_or_insert(w.off + w.written as u64);
                    dropped += (w.used - w.written) as u64;
                    w.used = w.written;
                    w.committed = w.written;
                }
            }
        }
        if let Some(stop) = stop {
            self.pos = stop;
            self.committed_end = self.committed_end.min(stop);
            // Every buffer is written out now: the finished ones go.
            let _ = self.drain(true);
        }
        dropped
    }

    pub(crate) fn sync_all(&mut self) -> io::Result<()> {
        self.flush()?;
        self.io.sync().map_err(|e| self.err("syncing", e))
    }

    /// Committed bytes (written by the application, in no region it still
    /// holds) that have not reached the file yet.
    pub(crate) fn pending_write(&self) -> u64 {
        self.wbufs
            .iter()
            .map(|&s| match &self.slots[s as usize].data {
                Data::Write(w) => (w.committed - w.written) as u64,
                _ => 0,
            })
            .sum()
    }

    /// True if the stream appends, all its bytes are written and its
    /// position is right after the last of them (no seek since).
    pub(super) fn just_appended(&self) -> bool {
        self.append
            && self
                .wcur
                .is_some_and(|c| match &self.slots[c as usize].data {
                    Data::Write(w) => {
                        w.used > 0 && w.written == w.used && w.off + w.used as u64 == self.pos
                    }
                    _ => false,
                })
    }

    /// Bytes taken for writing (in regions, or committed) that have not
    /// reached the file yet.
    pub(crate) fn unwritten(&self) -> u64 {
        self.wbufs
            .iter()
            .map(|&s| match &self.slots[s as usize].data {
                Data::Write(w) => (w.used - w.written) as u64,
                _ => 0,
            })
            .sum()
    }

    /// Regions handed out and not yet freed (write side).
    pub(crate) fn outstanding_writes(&self) -> usize {
        self.wq.iter().filter(|r| !r.freed).count()
    }

    /// Flushes and puts the descriptor's offset at the stream's (unless it
    /// is handed over: then it stays where it is, another handle may have
    /// moved it).
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        if std::mem::replace(&mut self.finished, true) {
            return Ok(());
        }
        let flushed = self.write_out();
        let lost = self.outstanding_writes();
        let finished = if self.is_lent() {
            Ok(())
        } else {
            self.io.finish(self.pos).map_err(|e| self.err("closing", e))
        };
        flushed?;
        if lost > 0 {
            return Err(self.err(
                "closing",
                io::Error::other(format!(
                    "{lost} write region(s) were never freed; their bytes and all after them were not written"
                )),
            ));
        }
        finished
    }
}
