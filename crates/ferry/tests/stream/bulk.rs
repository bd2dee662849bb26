//! ferry::bulk: typed arrays read and written in one call on files and
//! streams (mapped, buffered, memory, pipes), checked against an
//! independent encoding (each element's `to_be_bytes`/`to_le_bytes`),
//! short inputs that keep their partial element, write errors with
//! counts, and in-place views of bytes in memory.

use ferry::bulk::{incomplete, Element, Endian, Ordered, ReadArray, ViewError, WriteArray};
use ferry::stream::Backend;
use ferry::{Buf, OpenOptions, Stream};
use proptest::prelude::*;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::OwnedFd;

/// The bytes of `v` in `order`, element by element (the reference).
fn encode_u32(v: &[u32], order: Endian) -> Vec<u8> {
    v.iter()
        .flat_map(|x| match order {
            Endian::Big => x.to_be_bytes(),
            Endian::Little => x.to_le_bytes(),
            Endian::Native => x.to_ne_bytes(),
        })
        .collect()
}

fn encode_f64(v: &[f64], order: Endian) -> Vec<u8> {
    v.iter()
        .flat_map(|x| match order {
            Endian::Big => x.to_be_bytes(),
            Endian::Little => x.to_le_bytes(),
            Endian::Native => x.to_ne_bytes(),
        })
        .collect()
}

fn encode_i16(v: &[i16], order: Endian) -> Vec<u8> {
    v.iter()
        .flat_map(|x| match order {
            Endian::Big => x.to_be_bytes(),
            Endian::Little => x.to_le_bytes(),
            Endian::Native => x.to_ne_bytes(),
        })
        .collect()
}

fn orders() -> impl Strategy<Value = Endian> {
    prop_oneof![
        Just(Endian::Big),
        Just(Endian::Little),
        Just(Endian::Native)
    ]
}

/// The kinds of reader a test reads through.
#[derive(Debug, Clone, Copy)]
enum Via {
    File,
    MappedStream,
    BufferedStream,
    MemoryStream,
    PipeStream,
    PipeFile,
}

fn vias() -> impl Strategy<Value = Via> {
    prop_oneof![
        Just(Via::File),
        Just(Via::MappedStream),
        Just(Via::BufferedStream),
        Just(Via::MemoryStream),
        Just(Via::PipeStream),
        Just(Via::PipeFile),
    ]
}

/// Runs `read` on a reader of `bytes` of the kind `via`; returns its
/// result and the bytes a plain read then finds left.
fn read_via<R>(
    bytes: &[u8],
    via: Via,
    read: impl FnOnce(&mut dyn FnMut(&mut dyn FnMut(&mut dyn ArrayReader))) -> R,
) -> (R, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("in");
    std::fs::write(&p, bytes).unwrap();
    let mut rest = Vec::new();
    let mut feeder = None;
    let mut file_reader: Option<std::fs::File> = None;
    let mut stream_reader: Option<Stream> = None;
    match via {
        Via::File => file_reader = Some(std::fs::File::open(&p).unwrap()),
        Via::MappedStream => {
            stream_reader =
                Some(Stream::open(&p, &OpenOptions::read_only().backend(Backend::Mapped)).unwrap())
        }
        Via::BufferedStream => {
            stream_reader = Some(
                Stream::open(
                    &p,
                    &OpenOptions::read_only()
                        .backend(Backend::Buffered)
                        .buffer_size(4096),
                )
                .unwrap(),
            )
        }
        Via::MemoryStream => stream_reader = Some(Stream::from_bytes(bytes.to_vec())),
        Via::PipeStream | Via::PipeFile => {
            let (r, mut w) = std::io::pipe().unwrap();
            let data = bytes.to_vec();
            feeder = Some(std::thread::spawn(move || {
                for c in data.chunks(1237) {
                    w.write_all(c).unwrap();
                }
            }));
            let fd = OwnedFd::from(r);
            if matches!(via, Via::PipeStream) {
                stream_reader = Some(Stream::from_fd(fd).unwrap());
            } else {
                file_reader = Some(std::fs::File::from(fd));
            }
        }
    }
    let out = {
        let mut run = |f: &mut dyn FnMut(&mut dyn ArrayReader)| {
            if let Some(r) = file_reader.as_mut() {
                f(r);
            } else if let Some(s) = stream_reader.as_mut() {
                f(s);
            }
        };
        read(&mut run)
    };
    if let Some(t) = feeder {
        t.join().unwrap();
    }
    if let Some(mut r) = file_reader {
        r.read_to_end(&mut rest).unwrap();
    } else if let Some(mut s) = stream_reader {
        s.read_to_end(&mut rest).unwrap();
    }
    (out, rest)
}

/// Object-safe face of ReadArray for the element types the tests use.
trait ArrayReader {
    fn u32s(&mut self, out: &mut [u32], order: Endian) -> std::io::Result<()>;
    fn f64s(&mut self, out: &mut [f64], order: Endian) -> std::io::Result<()>;
    fn i16s(&mut self, out: &mut [i16], order: Endian) -> std::io::Result<()>;
}

impl<R: ReadArray> ArrayReader for R {
    fn u32s(&mut self, out: &mut [u32], order: Endian) -> std::io::Result<()> {
        self.read_array_in(out, order)
    }
    fn f64s(&mut self, out: &mut [f64], order: Endian) -> std::io::Result<()> {
        self.read_array_in(out, order)
    }
    fn i16s(&mut self, out: &mut [i16], order: Endian) -> std::io::Result<()> {
        self.read_array_in(out, order)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// write_array produces exactly the reference encoding, on a file and
    /// on a stream, and read_array through every kind of reader gives the
    /// values back; nothing is left over.
    #[test]
    fn arrays_round_trip_in_every_order(
        v in proptest::collection::vec(any::<u32>(), 0..20_000),
        g in proptest::collection::vec(any::<f64>(), 0..3_000),
        h in proptest::collection::vec(any::<i16>(), 0..3_000),
        order in orders(),
        via in vias(),
        through_stream in any::<bool>(),
    ) {
        let mut want = encode_u32(&v, order);
        want.extend(encode_f64(&g, order));
        want.extend(encode_i16(&h, order));
        let written = if through_stream {
            let mut s = Stream::memory();
            s.write_array_in(&v, order).unwrap();
            Ordered::new(&mut s, order).write_array(&g).unwrap();
            s.write_array_in(&h, order).unwrap();
            s.into_vec().unwrap()
        } else {
            let mut f = tempfile::tempfile().unwrap();
            f.write_array_in(&v, order).unwrap();
            Ordered::new(&mut f, order).write_array(&g).unwrap();
            (&f).write_array_in(&h, order).unwrap();
            f.rewind().unwrap();
            let mut b = Vec::new();
            f.read_to_end(&mut b).unwrap();
            b
        };
        prop_assert_eq!(&written, &want);
        let (got, rest) = read_via(&want, via, |run| {
            let mut a = vec![0u32; v.len()];
            let mut b = vec![0f64; g.len()];
            let mut c = vec![0i16; h.len()];
            let mut r = Ok(());
            run(&mut |rd| {
                r = rd.u32s(&mut a, order)
                    .and_then(|()| rd.f64s(&mut b, order))
                    .and_then(|()| rd.i16s(&mut c, order));
            });
            (r.map_err(|e| e.to_string()), a, b, c)
        });
        prop_assert_eq!(got.0, Ok(()));
        prop_assert_eq!(&got.1, &v);
        prop_assert_eq!(got.2.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                        g.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        prop_assert_eq!(&got.3, &h);
        prop_assert!(rest.is_empty());
    }

    /// A short input: the whole elements arrive (swapped), the error says
    /// how many, and the partial element's bytes are not lost — still
    /// readable from a file or stream, in the error from a bare pipe.
    #[test]
    fn a_short_input_keeps_its_partial_element(
        n in 0usize..5_000,
        extra in 1usize..4,
        want_more in 1usize..100,
        order in orders(),
        via in vias(),
    ) {
        let v: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let mut bytes = encode_u32(&v, order);
        let tail: Vec<u8> = (0..extra as u8).map(|i| 0xA0 + i).collect();
        bytes.extend_from_slice(&tail);
        let ((res, arr), rest) = read_via(&bytes, via, |run| {
            let mut a = vec![0u32; n + want_more];
            let mut r = Ok(());
            run(&mut |rd| r = rd.u32s(&mut a, order));
            (r, a)
        });
        let e = res.unwrap_err();
        prop_assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
        let inc = incomplete(&e).unwrap();
        prop_assert_eq!((inc.elements, inc.of), (n, n + want_more));
        prop_assert_eq!(&arr[..n], &v[..]);
        prop_assert_eq!(&inc.partial, &tail);
        if inc.unread {
            prop_assert_eq!(&rest, &tail);
        } else {
            prop_assert!(matches!(via, Via::PipeFile));
            prop_assert!(rest.is_empty());
        }
    }
}

/// Writes to a full device and to a pipe with no reader fail, saying how
/// many elements got out. Run in a child process of the test binary: it
/// sets SIGPIPE to its default disposition, which is the whole process's.
#[test]
fn write_errors_say_how_many_elements_got_out() {
    if crate::support::in_child(&test_name!(write_errors_say_how_many_elements_got_out)) {
        return;
    }
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let e = (&full).write_array(&[1u64; 1000]).unwrap_err();
    assert_eq!(ferry::stream::os_error(&e), Some(libc::ENOSPC), "{e}");
    assert_eq!(incomplete(&e).unwrap().elements, 0);
    let e = (&full)
        .write_array_in(&[1u64; 1000], Endian::Big)
        .unwrap_err();
    assert_eq!(ferry::stream::os_error(&e), Some(libc::ENOSPC), "{e}");

    // A pipe whose reader has gone: EPIPE, not a SIGPIPE death (default
    // disposition, as in a C program).
    // SAFETY: setting a signal's disposition to its default.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let (r, w) = std::io::pipe().unwrap();
    drop(r);
    let mut w = std::fs::File::from(OwnedFd::from(w));
    let e = w.write_array_in(&[7u32; 100], Endian::Big).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    assert!(e.to_string().contains("after 0 of 100 elements"), "{e}");
}

#[test]
fn a_large_array_moves_in_one_call() {
    let v: Vec<u64> = (0..(48u64 << 20) / 8).map(|i| i * 3).collect();
    let mut f = tempfile::tempfile().unwrap();
    f.write_array_in(&v, Endian::Big).unwrap();
    assert_eq!(f.stream_position().unwrap(), 48 << 20);
    f.seek(SeekFrom::Start(8)).unwrap();
    let mut back = vec![0u64; v.len() - 1];
    f.read_array_in(&mut back, Endian::Big).unwrap();
    assert_eq!(back[..], v[1..]);
}

#[test]
fn views_of_mapped_pages_are_in_place_and_refusals_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m");
    let v: Vec<u32> = (0..100_000).collect();
    std::fs::write(&p, encode_u32(&v, Endian::Native)).unwrap();
    let b = Buf::map_file(&std::fs::File::open(&p).unwrap(), 0..400_000).unwrap();
    let a = b.as_array::<u32>(Endian::Native).unwrap();
    assert_eq!(a, &v[..]);
    assert_eq!(a.as_ptr() as *const u8, b.as_ptr(), "a view, not a copy");
    assert!(matches!(
        b.slice(2..402).as_array::<u32>(Endian::Native),
        Err(ViewError::Misaligned { .. })
    ));
    assert!(matches!(
        b.slice(0..401).as_array::<u32>(Endian::Native),
        Err(ViewError::Length { len: 401, size: 4 })
    ));
    let foreign = if cfg!(target_endian = "little") {
        Endian::Big
    } else {
        Endian::Little
    };
    assert_eq!(
        b.as_array::<u32>(foreign).unwrap_err(),
        ViewError::ByteOrder(foreign)
    );
    let swapped = b.slice(0..8).to_array::<u32>(foreign).unwrap();
    assert_eq!(swapped, [0u32.swap_bytes(), 1u32.swap_bytes()]);
    // A misaligned slice copies into an aligned Vec.
    let odd = Buf::from(encode_u32(&[5, 6], Endian::Big));
    let mut m = odd.to_array::<u32>(Endian::Big).unwrap();
    assert_eq!(m, [5, 6]);
    u32::swap_all(&mut m);
    assert_eq!(m, [5u32.swap_bytes(), 6u32.swap_bytes()]);

    // A mapped stream's region at an aligned offset.
    let s = Stream::open(&p, &OpenOptions::read_only().backend(Backend::Mapped)).unwrap();
    let r = s.salloc(4096).unwrap();
    assert_eq!(r.as_array::<u32>(Endian::Native).unwrap(), &v[..1024]);
}

#[test]
fn bulk_reads_mix_with_std_io_on_one_stream() {
    let mut bytes = b"HDR".to_vec();
    bytes.extend(encode_u32(&[10, 20, 30], Endian::Big));
    bytes.extend_from_slice(b"tail");
    let mut s = Stream::from_bytes(bytes);
    let mut hdr = [0u8; 3];
    s.read_exact(&mut hdr).unwrap();
    let mut a = [0u32; 3];
    s.read_array_in(&mut a, Endian::Big).unwrap();
    assert_eq!(a, [10, 20, 30]);
    let mut tail = String::new();
    s.read_to_string(&mut tail).unwrap();
    assert_eq!((&hdr, tail.as_str()), (b"HDR", "tail"));
}
