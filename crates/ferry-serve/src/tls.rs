//! HTTPS: the server's rustls configuration, read from PEM files at
//! start (errors name the file), and a connection's side of it — records
//! read from the socket into the session and the plaintext taken out,
//! responses given to the session and its records written out.
//!
//! What goes into a record: a response's head and the cached extents of
//! a small file straight from their `Buf`s (one gathered write into the
//! session: rustls seals across the slices, no plaintext copy first); a
//! file body not held in memory is read a piece at a time (`pread`) into
//! one page-aligned buffer per worker and sealed from there. Kernel TLS
//! (the session's keys handed to the kernel after the handshake) would
//! let such bodies go by `sendfile` again, sealed in the kernel with no
//! copy through this process; this machine's kernel has no TLS support
//! (`TCP_ULP "tls"` fails with `ENOENT`), so that path is not built.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The certificate chain and private key of an HTTPS server, as PEM
/// files (`--tls-cert`, `--tls-key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate, then any intermediates (PEM `CERTIFICATE`s).
    pub cert: PathBuf,
    /// Its private key (PKCS #8, PKCS #1 or SEC1, in PEM).
    pub key: PathBuf,
}

/// The session configuration for `files`: TLS 1.3 and 1.2 with rustls's
/// safe defaults (ring's ciphers, AES-128-GCM preferred), ALPN
/// `http/1.1`, server-side session resumption. Errors name the file and what is wrong with it.
pub(crate) fn server_config(files: &TlsFiles) -> io::Result<Arc<rustls::ServerConfig>> {
    let bad = |p: &Path, what: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: {what}", p.display()),
        )
    };
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .map_err(|e| pem_error(&files.cert, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(&files.cert, e))?;
    if certs.is_empty() {
        return Err(bad(&files.cert, "no PEM certificate in it".into()));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| pem_error(&files.key, e))?;
    // AES-128-GCM with SHA-256 first, and the server's order over the
    // client's (OpenSSL clients ask for AES-256 with SHA-384 first): a
    // handshake's key schedule then hashes with SHA-256, which ring runs
    // on the CPU's SHA instructions where its SHA-384 runs generic code
    // (docs/BENCHMARKS.md, "iolite: HTTPS beside nginx", 2026-11-29), and
    // bodies are sealed in 10 AES rounds instead of 14.
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites.sort_by_key(|s| {
        use rustls::CipherSuite as C;
        match s.suite() {
            C::TLS13_AES_128_GCM_SHA256 => 0,
            C::TLS13_AES_256_GCM_SHA384 => 1,
            C::TLS13_CHACHA20_POLY1305_SHA256 => 2,
            _ => 3,
        }
    });
    let provider = Arc::new(provider);
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| io::Error::other(format!("TLS: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            bad(
                &files.key,
                format!("not usable with {}: {e}", files.cert.display()),
            )
        })?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    cfg.ignore_client_order = true;
    Ok(Arc::new(cfg))
}

fn pem_error(p: &Path, e: rustls::pki_types::pem::Error) -> io::Error {
    use rustls::pki_types::pem::Error;
    match e {
        Error::Io(e) => io::Error::new(e.kind(), format!("{}: {e}", p.display())),
        Error::NoItemsFound => io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: no PEM item of the kind wanted in it", p.display()),
        ),
        other => io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not PEM: {other}", p.display()),
        ),
    }
}

/// A new server session for one connection.
pub(crate) fn session(
    cfg: &Arc<rustls::ServerConfig>,
) -> io::Result<Box<rustls::ServerConnection>> {
    rustls::ServerConnection::new(cfg.clone())
        .map(Box::new)
        .map_err(|e| io::Error::other(format!("TLS: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_certificate_is_an_error_naming_it() {
        let e = server_config(&TlsFiles {
            cert: "/nonexistent/cert.pem".into(),
            key: "/nonexistent/key.pem".into(),
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("/nonexistent/cert.pem"), "{e}");
    }

    #[test]
    fn a_file_without_pem_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cert.pem");
        std::fs::write(&p, b"not a certificate\n").unwrap();
        let e = server_config(&TlsFiles {
            cert: p.clone(),
            key: p.clone(),
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains(&*p.to_string_lossy()), "{e}");
    }
}
