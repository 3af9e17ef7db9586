//! Files written whole, and a lock on a report directory.
//!
//! Every output file is written to a uniquely named temporary file beside it and renamed into
//! place: a reader never sees half a file, and two processes writing the same file never share a
//! temporary one. Two runs given the same `--out` take turns through an advisory lock on the
//! directory, so its files always come from one run.

use anyhow::Context;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

/// Writes `body` to `path` whole: a unique temporary file in the same directory, renamed into
/// place (the temporary file is removed if anything fails).
pub fn write_atomic(path: &Path, body: &[u8]) -> anyhow::Result<()> {
    staged(path, &mut |w| w.write_all(body))?.commit()
}

/// A file written next to its destination, moved into place by [`Staged::commit`] (dropped
/// uncommitted, it is removed): several files can be staged and committed only when all
/// were written.
pub struct Staged {
    tmp: tempfile::NamedTempFile,
    path: std::path::PathBuf,
}

impl Staged {
    pub fn commit(self) -> anyhow::Result<()> {
        let path = self.path;
        self.tmp
            .persist(&path)
            .map_err(|e| e.error)
            .with_context(|| format!("{}: cannot move into place", path.display()))?;
        Ok(())
    }
}

/// Writes `path`'s content through `write` (buffered) into a temporary file beside it.
pub fn staged(
    path: &Path,
    write: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<Staged> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut b = tempfile::Builder::new();
    b.prefix(&prefix).suffix(".tmp");
    // the mode `std::fs::write` gives a new file (0666 less the umask), not tempfile's 0600
    #[cfg(unix)]
    b.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = b
        .tempfile_in(dir)
        .with_context(|| format!("{}: cannot create a temporary file", dir.display()))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 16, tmp);
    // `into_inner` flushes the buffer
    let tmp = write(&mut w)
        .and_then(|_| w.into_inner().map_err(|e| e.into_error()))
        .with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(Staged {
        tmp,
        path: path.to_path_buf(),
    })
}

/// Removes what [`staged`] left of `names` in `dir` when its process was killed before it could
/// clean up (`.NAME.XXXXXX.tmp`). Only a caller that holds `dir`'s [`lock_dir`] may call it:
/// every writer of those files holds the lock, so none of them is still being written.
pub fn remove_stale_staged(dir: &Path, names: &[&str]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(file) = file.to_str() else { continue };
        let stale = names.iter().any(|n| {
            file.strip_prefix('.')
                .and_then(|f| f.strip_prefix(n))
                .and_then(|f| f.strip_prefix('.'))
                .and_then(|f| f.strip_suffix(".tmp"))
                .is_some_and(|random| {
                    random.len() == 6 && random.chars().all(|c| c.is_ascii_alphanumeric())
                })
        });
        if stale && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Reads an input file whole like [`read`], gunzipped when its name ends in `.gz` (the
/// decompressed size bounded by [`MAX_INPUT`] too).
pub fn read_maybe_gzip(path: &Path) -> std::io::Result<Vec<u8>> {
    let raw = read(path)?;
    if path.extension().is_none_or(|e| e != "gz") {
        return Ok(raw);
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&raw[..])
        .take(MAX_INPUT + 1)
        .read_to_end(&mut out)?;
    if out.len() as u64 > MAX_INPUT {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("decompresses to more than {MAX_INPUT} bytes"),
        ));
    }
    Ok(out)
}

/// The largest input file read (a dataset, a report, a configuration), in bytes.
pub const MAX_INPUT: u64 = 1 << 30;

/// Reads an input file whole, refusing what is not a regular file before opening it (a FIFO
/// would block the open, `/dev/zero` never ends) and what is larger than [`MAX_INPUT`].
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    read_at_most(path, MAX_INPUT)
}

/// [`read`] with a smaller bound of `max` bytes (an input that is never large, such as the
/// runner's event payload).
pub fn read_at_most(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let meta = regular_file(path)?;
    if meta.len() > max {
        return Err(too_large(max));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    // a file still growing is cut at the limit
    std::fs::File::open(path)?
        .take(max + 1)
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(too_large(max));
    }
    Ok(buf)
}

/// The error for an input larger than `max` bytes.
fn too_large(max: u64) -> std::io::Error {
    let msg = format!("larger than {} MiB", max >> 20);
    std::io::Error::new(std::io::ErrorKind::InvalidInput, msg)
}

/// The metadata of an input file that is a regular file; anything else (a FIFO would block
/// the open, `/dev/zero` never ends) is refused before it is opened.
fn regular_file(path: &Path) -> std::io::Result<std::fs::Metadata> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "a FIFO, socket or device"
        };
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("expected a regular file, found {what}"),
        ));
    }
    Ok(meta)
}

/// An input file for reading as a stream (never whole in memory), with the checks of [`read`]:
/// a regular file, at most [`MAX_INPUT`] bytes (a file still growing fails at the limit).
pub fn open(path: &Path) -> std::io::Result<impl Read> {
    regular_file(path)?;
    struct Capped<R> {
        inner: R,
        left: u64,
    }
    impl<R: Read> Read for Capped<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.left = self
                .left
                .checked_sub(n as u64)
                .ok_or_else(|| too_large(MAX_INPUT))?;
            Ok(n)
        }
    }
    Ok(std::io::BufReader::with_capacity(
        1 << 16,
        Capped {
            inner: std::fs::File::open(path)?,
            left: MAX_INPUT,
        },
    ))
}

/// [`read`] as UTF-8 text (invalid UTF-8 is an `InvalidData` error, as with `std::fs`).
pub fn read_to_string(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read(path)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Holds a directory's advisory lock until dropped.
#[derive(Debug)]
pub struct DirLock {
    _dir: std::fs::File,
}

/// Takes `dir`'s advisory lock (creating `dir`), waiting up to `wait` for another evalgate
/// process that holds it. The lock is on the directory itself (`flock` on its descriptor), so
/// no lock file is left among the reports.
pub fn lock_dir(dir: &Path, wait: Duration) -> anyhow::Result<DirLock> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the report directory", dir.display()))?;
    let file = std::fs::File::open(dir)
        .with_context(|| format!("{}: cannot open the directory to lock it", dir.display()))?;
    let start = Instant::now();
    let mut said = false;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(DirLock { _dir: file }),
            Err(std::fs::TryLockError::WouldBlock) => {
                if start.elapsed() >= wait {
                    anyhow::bail!(
                        "{}: another evalgate run has been writing its reports here for {} s; give each run its own --out",
                        dir.display(),
                        wait.as_secs()
                    );
                }
                if !said {
                    crate::errln!(
                        "waiting for another evalgate run writing into {}",
                        dir.display()
                    );
                    said = true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("{}: cannot lock", dir.display()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_is_whole_and_leaves_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(
                mode & 0o044,
                0o044,
                "readable by others as with a plain write: {mode:o}"
            );
        }
    }

    #[test]
    fn only_what_a_killed_writer_left_of_the_named_files_is_removed() {
        let d = tempfile::tempdir().unwrap();
        let keep = [
            "report.json",
            ".report.json.tmp",
            ".notes.AbC123.tmp",
            ".report.json.AbC12.tmp",
            "report.json.AbC123.tmp",
        ];
        let gone = [".report.json.AbC123.tmp", ".report.md.zz9Q0x.tmp"];
        for f in keep.iter().chain(&gone) {
            std::fs::write(d.path().join(f), "x").unwrap();
        }
        // a killed writer's file, as [`staged`] names it
        let left = staged(&d.path().join("report.html"), &mut |w| w.write_all(b"x")).unwrap();
        let left = left.tmp.into_temp_path().keep().unwrap();
        remove_stale_staged(d.path(), &["report.json", "report.md", "report.html"]);
        let mut now: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        now.sort();
        let mut want: Vec<String> = keep.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(now, want);
        assert!(!left.exists());
    }

    #[test]
    fn a_held_lock_makes_the_next_one_wait_then_give_up() {
        let d = tempfile::tempdir().unwrap();
        let held = lock_dir(d.path(), Duration::from_secs(1)).unwrap();
        // a second open file description of the same directory conflicts, as another process's
        let e = lock_dir(d.path(), Duration::from_millis(200)).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("another evalgate run") && msg.contains("--out"),
            "{msg}"
        );
        drop(held);
        lock_dir(d.path(), Duration::from_millis(200)).unwrap();
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "no lock file"
        );
    }
}
