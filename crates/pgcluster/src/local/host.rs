//! What the machine offers a private cluster: PostgreSQL's programs, and when Quire runs as
//! root, the system user to run them as.

use std::path::{Path, PathBuf};

use quire_kernel::InfraError;

/// The folder holding both `initdb` and `postgres`: for an existing cluster, its own major
/// version's (Debian's `/usr/lib/postgresql/<major>/bin`) first, since a server refuses
/// another major's files; then the first on `PATH`; then the newest of
/// `/usr/lib/postgresql/*/bin`.
#[must_use]
pub fn find_binaries(pgdata: Option<&Path>) -> Option<PathBuf> {
    let has_both = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    let debian = Path::new("/usr/lib/postgresql");
    if let Some(version) = pgdata
        .and_then(|d| std::fs::read_to_string(d.join("PG_VERSION")).ok())
        .map(|v| v.trim().to_owned())
    {
        let dir = debian.join(version).join("bin");
        if has_both(&dir) {
            return Some(dir);
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if has_both(&dir) {
                return Some(dir);
            }
        }
    }
    let mut versions: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(debian)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version = name
                .split('.')
                .map(str::parse)
                .collect::<Result<Vec<u32>, _>>()
                .ok()?;
            let bin = entry.path().join("bin");
            has_both(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// The account PostgreSQL's programs run as when Quire is root, which PostgreSQL refuses
/// to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunAs {
    pub uid: u32,
    pub gid: u32,
}

/// `None` when Quire is not root (PostgreSQL runs as Quire's own user); as root, the
/// `postgres` system user that PostgreSQL's packages make.
pub(crate) fn run_as() -> Result<Option<RunAs>, InfraError> {
    if !rustix::process::geteuid().is_root() {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    postgres_user(&passwd).map(Some).ok_or_else(|| {
        InfraError::new(
            "QUIRE_DATABASES=local: Quire runs as root, which PostgreSQL refuses to run as, and \
             this machine has no `postgres` user to run it as. Create one (useradd --system \
             postgres, or install PostgreSQL's packages), or run Quire as another user",
        )
    })
}

fn postgres_user(passwd: &str) -> Option<RunAs> {
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        if fields.next()? != "postgres" {
            return None;
        }
        let uid = fields.nth(1)?.parse().ok()?;
        let gid = fields.next()?.parse().ok()?;
        (uid != 0).then_some(RunAs { uid, gid })
    })
}

/// Makes `dir` (and the folders above it) passable to `user`: Quire's data folder may be
/// root's alone (`0700`); PostgreSQL's own folders inside it are the `postgres` user's.
/// Only `dir` itself gains the search bit for others (`o+x`: entering, not listing);
/// a folder above it that bars the user is an error naming it, not changed.
pub(crate) fn let_through(dir: &Path, user: RunAs) -> Result<(), InfraError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(dir)
        .map_err(|e| InfraError::new(format!("reading {}: {e}", dir.display())))?;
    if meta.mode() & 0o001 == 0 && meta.uid() != user.uid {
        let mut permissions = meta.permissions();
        permissions.set_mode(meta.mode() | 0o001);
        std::fs::set_permissions(dir, permissions)
            .map_err(|e| InfraError::new(format!("opening {} to postgres: {e}", dir.display())))?;
    }
    for above in dir.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(above) else {
            continue;
        };
        if meta.mode() & 0o001 == 0 && meta.uid() != user.uid {
            return Err(InfraError::new(format!(
                "QUIRE_DATABASES=local: PostgreSQL runs as the `postgres` user, who cannot pass \
                 through {} (mode {:o}); give it the search bit (chmod o+x) or choose a data \
                 folder elsewhere",
                above.display(),
                meta.mode() & 0o7777
            )));
        }
    }
    Ok(())
}

/// Hands `path` to `user` (as root), or leaves it as is (not root).
pub(crate) fn hand_over(path: &Path, user: Option<RunAs>) -> Result<(), InfraError> {
    if let Some(user) = user {
        std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid))
            .map_err(|e| InfraError::new(format!("handing {} to postgres: {e}", path.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_postgres_user_is_read_from_passwd() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n\
                      postgres:x:101:104:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash\n";
        assert_eq!(postgres_user(passwd), Some(RunAs { uid: 101, gid: 104 }));
        assert_eq!(postgres_user("root:x:0:0::/root:/bin/sh\n"), None);
        assert_eq!(postgres_user("postgres:x:0:0::/:/bin/sh\n"), None);
    }
}
