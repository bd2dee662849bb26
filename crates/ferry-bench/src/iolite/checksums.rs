//! The checksum cache (IO-Lite §3.5): a cached CRC-32C against computing
//! it again over 64 KiB, and an aggregate's CRC-32C, Internet checksum
//! and ETag from cached slice values against one pass over its bytes.

use crate::measure::{compare, interleave, timed, Scale, Variant};
use crate::report::{Row, Target, Unit};
use ferry::cache::Checksums;
use ferry::{Aggregate, Buf};
use std::hint::black_box;

const BODY: usize = 64 * 1024;
/// The aggregate: a response header and a 64 KiB body in 4 KiB slices, as
/// a server sends a cached file (the header of odd length, 57 bytes, so
/// every slice after it starts at an odd offset).
const SLICE: usize = 4096;

fn body() -> Buf {
    Buf::from(
        (0..BODY)
            .map(|i| (i as u8).wrapping_mul(131) ^ (i >> 9) as u8)
            .collect::<Vec<u8>>(),
    )
}

fn response(body: &Buf) -> Aggregate {
    let mut a = Aggregate::from(Buf::from_static(
        b"HTTP/1.1 200 OK\r\nServer: ferry\r\nContent-Length: 65536\r\n\r\n",
    ));
    for at in (0..body.len()).step_by(SLICE) {
        a.append_buf(body.slice(at..at + SLICE));
    }
    a
}

fn check(ok: bool, what: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("{what}: the cached value differs from one pass"))
    }
}

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let sums = Checksums::new();
    let buf = body();
    let agg = response(&buf);
    let flat = agg.copy_to_vec();
    let chunks: Vec<&[u8]> = agg.chunks().collect();
    if chunks[0].len().is_multiple_of(2) {
        return Err("the header must be of odd length".into());
    }
    // Warm the cache, and check it once against one pass.
    let err = |e: ferry::cache::Damaged| e.to_string();
    check(
        sums.crc32c(&buf).map_err(err)? == crc32c::crc32c(&buf),
        "crc32c",
    )?;
    check(
        sums.crc32c_aggregate(&agg).map_err(err)? == crc32c::crc32c(&flat),
        "crc32c_aggregate",
    )?;
    check(
        sums.internet_checksum_aggregate(&agg).map_err(err)?
            == u16::from_be_bytes(internet_checksum::checksum(&flat)),
        "internet_checksum_aggregate",
    )?;
    check(
        sums.strong_hash_aggregate(&agg).map_err(err)? == *blake3::hash(&flat).as_bytes(),
        "strong_hash_aggregate",
    )?;

    let n_hit = scale.of(2_000_000);
    let n_pass = scale.of(20_000);
    let mut vs = vec![
        Variant::new("Checksums::crc32c hit, 64 KiB Buf", || {
            timed(n_hit, || {
                for _ in 0..n_hit {
                    let _ = black_box(sums.crc32c(black_box(&buf)));
                }
            })
        }),
        Variant::new("crc32c::crc32c over 64 KiB", || {
            timed(n_pass, || {
                for _ in 0..n_pass {
                    black_box(crc32c::crc32c(black_box(&buf)));
                }
            })
        }),
        Variant::new("Checksums::crc32c_aggregate, 17 cached slices", || {
            timed(n_pass, || {
                for _ in 0..n_pass {
                    let _ = black_box(sums.crc32c_aggregate(black_box(&agg)));
                }
            })
        }),
        Variant::new("crc32c_append over the 17 slices (one pass)", || {
            timed(n_pass, || {
                for _ in 0..n_pass {
                    let mut crc = 0;
                    for c in black_box(&chunks) {
                        crc = crc32c::crc32c_append(crc, c);
                    }
                    black_box(crc);
                }
            })
        }),
        Variant::new("crc32c::crc32c_combine of the 17 slices' CRCs", || {
            let crcs: Vec<(u32, usize)> = chunks
                .iter()
                .map(|c| (crc32c::crc32c(c), c.len()))
                .collect();
            let n = (n_pass / 20).max(1);
            timed(n, || {
                for _ in 0..n {
                    let mut crc = 0;
                    for &(c, len) in black_box(&crcs) {
                        crc = crc32c::crc32c_combine(crc, c, len);
                    }
                    black_box(crc);
                }
            })
        }),
        Variant::new(
            "Checksums::internet_checksum_aggregate, 17 cached slices",
            || {
                timed(n_pass, || {
                    for _ in 0..n_pass {
                        let _ = black_box(sums.internet_checksum_aggregate(black_box(&agg)));
                    }
                })
            },
        ),
        Variant::new("internet_checksum over the bytes (one pass)", || {
            timed(n_pass, || {
                for _ in 0..n_pass {
                    black_box(internet_checksum::checksum(black_box(&flat)));
                }
            })
        }),
        Variant::new("Checksums::etag hit, 17 slices", || {
            timed(n_pass, || {
                for _ in 0..n_pass {
                    let _ = black_box(sums.etag(black_box(&agg)));
                }
            })
        }),
        Variant::new("blake3::hash over the bytes (one pass)", || {
            timed(n_pass, || {
                for _ in 0..n_pass {
                    black_box(blake3::hash(black_box(&flat)));
                }
            })
        }),
    ];
    let s = interleave(runs, &mut vs)?;
    let row = |what: &str, ferry: &str, base: &str, target: Target| {
        compare(&s, what, ferry, base, Unit::NsPerOp, target, runs)
    };
    Ok(vec![
        row(
            "CRC-32C of 64 KiB: cache hit vs recomputing",
            "Checksums::crc32c hit, 64 KiB Buf",
            "crc32c::crc32c over 64 KiB",
            Target::MinRatio(50.0),
        ),
        row(
            "CRC-32C of header + 64 KiB: combined vs one pass",
            "Checksums::crc32c_aggregate, 17 cached slices",
            "crc32c_append over the 17 slices (one pass)",
            Target::MinRatio(1.0),
        ),
        row(
            "CRC-32C combine: ours vs the crc32c crate's",
            "Checksums::crc32c_aggregate, 17 cached slices",
            "crc32c::crc32c_combine of the 17 slices' CRCs",
            Target::None,
        ),
        row(
            "Internet checksum of header + 64 KiB: combined vs one pass",
            "Checksums::internet_checksum_aggregate, 17 cached slices",
            "internet_checksum over the bytes (one pass)",
            Target::MinRatio(1.0),
        ),
        row(
            "ETag of header + 64 KiB: cache hit vs BLAKE3 one pass",
            "Checksums::etag hit, 17 slices",
            "blake3::hash over the bytes (one pass)",
            Target::None,
        ),
    ])
}
