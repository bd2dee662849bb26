//! Handing the descriptor's offset over (POSIX 2.5.1, "Interaction of File
//! Descriptors and Standard I/O Streams"). A stream over a descriptor the
//! caller gave reads and writes at positions (`pread`/`pwrite`, mapped
//! windows), so the descriptor's own offset does not follow it. At the
//! points where another handle may take over — `flush`, a seek, close —
//! the stream writes out what it holds and puts the descriptor's offset at
//! its position (read-ahead is given back: the offset is where the reader
//! stopped, not where the buffer ends). Until it is used again the stream
//! is *lent*: another handle (a `dup`, a child process, a shell) may move
//! the offset, and the stream's next read, write, seek or position goes
//! on from where the descriptor's offset then is, as glibc's does. One
//! `lseek` at each of those points; the I/O between them stays positional.

use super::*;

impl Inner {
    /// Writes every committed byte, in order, and hands the descriptor's
    /// offset over (the public `flush`).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.write_out()?;
        self.hand_over()
    }

    /// The public seek: moves the stream offset and hands the descriptor's
    /// offset over at the new position.
    pub(crate) fn seek_hand_over(&mut self, to: SeekFrom) -> io::Result<u64> {
        if !self.io.positional() {
            return self.seek(to);
        }
        // Where the stream is (taken back if lent), for a failed seek to
        // leave it there.
        self.resume()?;
        let was = self.pos;
        let p = self.seek(to)?;
        if let Err(e) = self.hand_over() {
            // As lseek: a seek that fails (an offset past what the file
            // system allows: EINVAL) does not move the position.
            self.pos = was;
            self.lent = false;
            return Err(e);
        }
        Ok(p)
    }

    /// The stream offset, taken back from the descriptor if lent.
    pub(crate) fn position(&mut self) -> io::Result<u64> {
        self.resume()?;
        Ok(self.pos)
    }

    /// Puts the descriptor's offset at `pos` (for modules over a shared
    /// descriptor), after writing out every committed byte. With no write
    /// region outstanding the stream is then lent: its buffers end here and
    /// its next use takes the offset back.
    fn hand_over(&mut self) -> io::Result<()> {
        if self.lent {
            // Not used since the last hand-over: the offset is where it
            // was left, or where another handle moved it.
            return Ok(());
        }
        if !self.io.shares_offset() {
            return Ok(());
        }
        // Written out first: an O_APPEND write moves the offset.
        self.write_out()?;
        if self.just_appended() {
            // The bytes went to the end of the file, which another writer
            // may have moved since the stream last looked: the position is
            // where the last write left the descriptor's offset.
            if let Ok(at) = self.io.take_back() {
                self.pos = at;
            }
        }
        let pos = self.pos;
        self.io.hand_over(pos).map_err(|e| self.err("seeking", e))?;
        self.retire_read();
        if self.wq.is_empty() {
            // The current write buffer (all written) stops being current,
            // so the next write starts a new one where the offset is then.
            self.wcur = None;
            self.drain(false)?;
            self.lent = true;
        }
        Ok(())
    }

    /// Takes the descriptor's offset back if the stream is lent. Called
    /// first by every operation that reads, writes or asks for `pos` (the
    /// fast paths need not: a lent stream has no current buffer).
    #[inline]
    pub(super) fn resume(&mut self) -> io::Result<()> {
        if self.lent {
            self.take_back()
        } else {
            Ok(())
        }
    }

    #[cold]
    fn take_back(&mut self) -> io::Result<()> {
        let at = self.io.take_back().map_err(|e| self.err("seeking", e))?;
        self.lent = false;
        if at != self.pos {
            self.retire_read();
            self.pos = at;
        }
        Ok(())
    }

    /// True while the descriptor's offset is handed over (close leaves it
    /// where it is then).
    pub(super) fn is_lent(&self) -> bool {
        self.lent
    }
}
