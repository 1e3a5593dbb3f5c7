// The directory workspace's host object (Node only): the file operations
// Go's workspace/dirfs driver calls under js/wasm, on node:fs. The wasm
// never touches the disk itself (Go's os.Root over Node's fs leaked 2,734
// of 20,000 reads under a symbolic-link swap: research
// directory-bash-git.md §3). Every operation opens first and then checks
// what it opened through /proc/self/fd/N, and names inside a checked
// directory through /proc/self/fd/N/name, so a link swapped in between
// resolving and opening cannot lead outside the root (0 leaks measured).
// Nothing is created or truncated before the directory or file it lands in
// is checked: a write through a link that leaves the root creates nothing.
//
// Go calls the methods synchronously (workspace/dirfs/host_js.go); a
// failure throws an Error whose `code` is Node's (ENOENT, ENOTDIR, EISDIR,
// EEXIST, ENOTEMPTY, …) or ESCAPE (the path leaves the root) or ENOTREG
// (a device, socket or FIFO).

import fs from 'node:fs';
import path from 'node:path';

const C = fs.constants;
// O_PATH (Linux): a descriptor that names a file without opening it for
// reading or writing: no permission needed, no effect on FIFOs or devices.
const O_PATH = 0o10000000;
const fdPath = (/** @type {number} */ fd) => `/proc/self/fd/${fd}`;

/**
 * @param {string} message
 * @param {string} code
 */
function fail(message, code) {
  const e = /** @type {Error & {code: string}} */ (new Error(message));
  e.code = code;
  return e;
}
const escape = () => fail('the path leaves the workspace root through a symbolic link', 'ESCAPE');

/** @param {fs.Stats} st */
function kind(st) {
  if (st.isFile()) return 'f';
  if (st.isDirectory()) return 'd';
  if (st.isSymbolicLink()) return 'l';
  return 'u';
}
// One entry as Go reads it: kind, size, mtime in ms, NUL-separated.
/** @param {fs.Stats} st */
const packed = (st) => `${kind(st)}\0${st.isDirectory() ? 0 : st.size}\0${st.mtimeMs}`;

/**
 * openDirHost checks root and returns the object Go's dirfs.OpenHost
 * takes. It throws an Error whose message completes "options.workspace.root
 * …" when root does not exist or is not a directory, and on platforms
 * without /proc/self/fd.
 * @param {string} root
 */
export function openDirHost(root) {
  if (process.platform !== 'linux') {
    // option: which options.workspace field the message completes (Go's
    // openDirectory); the others are about root.
    throw Object.assign(new Error(`'directory' is unsupported on ${process.platform}: Node.js serves it on Linux only, where every file it opens is checked through /proc/self/fd (use 'memory' here)`), { option: 'kind' });
  }
  if (typeof root !== 'string' || root === '') throw new Error('is required: the path of a directory');
  let real;
  try {
    real = fs.realpathSync.native(path.resolve(root));
  } catch (e) {
    const err = /** @type {NodeJS.ErrnoException} */ (e);
    throw new Error(err.code === 'ENOENT' ? `${JSON.stringify(root)} does not exist` : `${JSON.stringify(root)}: ${err.message}`);
  }
  if (!fs.statSync(real).isDirectory()) throw new Error(`${JSON.stringify(root)} is not a directory`);
  const prefix = real === '/' ? '/' : `${real}/`;
  const within = (/** @type {string} */ p) => p === real || p.startsWith(prefix);
  const abs = (/** @type {string} */ name) => (name === '.' ? real : prefix + name);
  const close = (/** @type {number} */ fd) => { try { fs.closeSync(fd); } catch { /* already closed */ } };

  // openIn opens name and checks the descriptor is inside the root; the
  // open itself has no effect (no O_CREAT, no O_TRUNC).
  /** @param {string} name @param {number} flags */
  function openIn(name, flags) {
    let fd;
    try {
      fd = fs.openSync(abs(name), flags);
    } catch (e) {
      if (/** @type {NodeJS.ErrnoException} */ (e).code === 'ENOENT' && leaves(name)) throw escape();
      throw e;
    }
    let p;
    try {
      p = fs.readlinkSync(fdPath(fd));
    } catch (e) {
      close(fd);
      throw e;
    }
    if (!within(p)) {
      close(fd);
      throw escape();
    }
    return fd;
  }
  // leaves reports whether a link on name's path points out of the root:
  // it only picks the error of an open that already failed (a dangling
  // link out is the escape it is, as natively), never decides an access.
  /** @param {string} name */
  function leaves(name) {
    let dir = real;
    for (const c of name.split('/')) {
      const p = `${dir}/${c}`;
      let st;
      try { st = fs.lstatSync(p); } catch { return false; }
      if (!st.isSymbolicLink()) { dir = p; continue; }
      dir = path.resolve(dir, fs.readlinkSync(p));
      if (!within(dir)) return true;
    }
    return false;
  }
  const dirOf = (/** @type {string} */ name) => { const i = name.lastIndexOf('/'); return i < 0 ? '.' : name.slice(0, i); };
  const baseOf = (/** @type {string} */ name) => name.slice(name.lastIndexOf('/') + 1);
  // parent opens name's directory, checked; the name itself is then looked
  // up in that descriptor, never from the top again.
  const parent = (/** @type {string} */ name) => openIn(dirOf(name), O_PATH | C.O_DIRECTORY);

  // throughLink follows a link that stands where something is to be
  // created (a dangling link), if it stays inside the root: the name of
  // its target, relative to the root.
  /** @param {number} dfd @param {string} base */
  function throughLink(dfd, base) {
    const target = fs.readlinkSync(`${fdPath(dfd)}/${base}`);
    const t = path.resolve(fs.readlinkSync(fdPath(dfd)), target);
    if (!within(t)) throw escape();
    return t === real ? '.' : t.slice(prefix.length);
  }

  // mkdirs creates dir and its missing parents one checked directory at a
  // time and returns dir's checked descriptor (O_PATH).
  /** @param {string} dir @param {number} depth */
  function mkdirs(dir, depth = 0) {
    if (depth > 40) throw fail('too many levels of symbolic links', 'ELOOP');
    let fd = openIn('.', O_PATH | C.O_DIRECTORY);
    if (dir === '.') return fd;
    const parts = dir.split('/');
    for (let i = 0; i < parts.length; i++) {
      const at = `${fdPath(fd)}/${parts[i]}`;
      let next, redirect;
      try {
        try {
          next = fs.openSync(at, O_PATH | C.O_DIRECTORY);
        } catch (e) {
          if (/** @type {NodeJS.ErrnoException} */ (e).code !== 'ENOENT') throw e;
          try {
            fs.mkdirSync(at, 0o777);
          } catch (e2) {
            if (/** @type {NodeJS.ErrnoException} */ (e2).code !== 'EEXIST') throw e2;
            // A dangling link: create its target instead, if inside.
            if (fs.lstatSync(at).isSymbolicLink()) redirect = throughLink(fd, parts[i]);
          }
          if (redirect === undefined) next = fs.openSync(at, O_PATH | C.O_DIRECTORY);
        }
      } finally {
        close(fd);
      }
      if (redirect !== undefined) {
        const rest = parts.slice(i + 1).join('/');
        return mkdirs(rest ? `${redirect}/${rest}` : redirect, depth + 1);
      }
      let p;
      try { p = fs.readlinkSync(fdPath(next)); } catch (e) { close(next); throw e; }
      if (!within(p)) { close(next); throw escape(); }
      fd = next;
    }
    return fd;
  }

  /** @param {number} fd @param {Uint8Array} data */
  function writeAll(fd, data) {
    for (let off = 0; off < data.length;) off += fs.writeSync(fd, data, off, data.length - off);
  }

  /** @param {string} name @param {Uint8Array} data @param {boolean} add @param {number} depth */
  function write(name, data, add, depth = 0) {
    if (depth > 40) throw fail('too many levels of symbolic links', 'ELOOP');
    let pfd;
    try {
      pfd = openIn(name, O_PATH);
    } catch (e) {
      if (/** @type {NodeJS.ErrnoException} */ (e).code !== 'ENOENT') throw e;
    }
    let fd;
    if (pfd !== undefined) {
      // It exists and is inside: reopen that very file for writing.
      try {
        const st = fs.fstatSync(pfd);
        if (st.isDirectory()) throw fail('is a directory', 'EISDIR');
        if (!st.isFile()) throw fail('not a regular file (a device, socket or FIFO)', 'ENOTREG');
        fd = fs.openSync(fdPath(pfd), C.O_WRONLY | C.O_NONBLOCK | C.O_NOCTTY | (add ? C.O_APPEND : 0));
      } finally {
        close(pfd);
      }
      try {
        if (!add) fs.ftruncateSync(fd, 0);
        writeAll(fd, data);
      } finally {
        close(fd);
      }
      return;
    }
    // Missing: create it in its checked directory, never through a link.
    const dfd = mkdirs(dirOf(name));
    const base = baseOf(name);
    try {
      fd = fs.openSync(`${fdPath(dfd)}/${base}`, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY, 0o666);
    } catch (e) {
      if (/** @type {NodeJS.ErrnoException} */ (e).code !== 'EEXIST') { close(dfd); throw e; }
      // A dangling link (or a file created meanwhile): through the link
      // if it stays inside, else refuse; then start over.
      let next = name;
      try {
        if (fs.lstatSync(`${fdPath(dfd)}/${base}`).isSymbolicLink()) next = throughLink(dfd, base);
      } finally {
        close(dfd);
      }
      return write(next, data, add, depth + 1);
    }
    close(dfd);
    try {
      writeAll(fd, data);
    } finally {
      close(fd);
    }
  }

  // rmTree removes base in the checked directory dfd, descending only into
  // directories opened with O_NOFOLLOW, so a link swapped in cannot lead
  // the removal outside.
  /** @param {number} dfd @param {string} base */
  function rmTree(dfd, base) {
    const at = `${fdPath(dfd)}/${base}`;
    if (!fs.lstatSync(at).isDirectory()) {
      fs.unlinkSync(at);
      return;
    }
    const cfd = fs.openSync(at, C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW);
    try {
      for (const n of fs.readdirSync(fdPath(cfd))) rmTree(cfd, n);
    } finally {
      close(cfd);
    }
    fs.rmdirSync(at);
  }

  return {
    /** The root's real path. */
    root: real,

    /** @param {string} name @param {boolean} follow */
    stat(name, follow) {
      if (follow || name === '.') {
        const fd = openIn(name, O_PATH);
        try { return packed(fs.fstatSync(fd)); } finally { close(fd); }
      }
      const dfd = parent(name);
      try { return packed(fs.lstatSync(`${fdPath(dfd)}/${baseOf(name)}`)); } finally { close(dfd); }
    },

    /** @param {string} name */
    read(name) {
      const fd = openIn(name, C.O_RDONLY | C.O_NONBLOCK | C.O_NOCTTY);
      try {
        const st = fs.fstatSync(fd);
        if (st.isDirectory()) throw fail('is a directory', 'EISDIR');
        if (!st.isFile()) throw fail('not a regular file (a device, socket or FIFO)', 'ENOTREG');
        // The size fstat gave is read in one call; a file that grows since
        // is read on to its end.
        let buf = Buffer.allocUnsafe(st.size + 1);
        let n = 0;
        for (;;) {
          const k = fs.readSync(fd, buf, n, buf.length - n, null);
          if (k === 0) break;
          n += k;
          if (n === st.size) break;
          if (n === buf.length) { // the file grew
            const more = Buffer.allocUnsafe(buf.length * 2);
            buf.copy(more, 0, 0, n);
            buf = more;
          }
        }
        return buf.subarray(0, n);
      } finally {
        close(fd);
      }
    },

    /** @param {string} name @param {Uint8Array} data @param {boolean} add */
    write(name, data, add) { write(name, data, add); },

    /** @param {string} name */
    readdir(name) {
      const fd = openIn(name, C.O_RDONLY | C.O_DIRECTORY | C.O_NONBLOCK);
      try {
        const dir = fdPath(fd);
        let out = '';
        for (const n of fs.readdirSync(dir)) {
          let st;
          try {
            st = fs.lstatSync(`${dir}/${n}`);
          } catch (e) {
            if (/** @type {NodeJS.ErrnoException} */ (e).code === 'ENOENT') continue; // removed since listed
            throw e;
          }
          out += `${n}\0${packed(st)}\0`;
        }
        return out;
      } finally {
        close(fd);
      }
    },

    /** @param {string} name */
    mkdirAll(name) { close(mkdirs(name)); },

    /** @param {string} name */
    removeAll(name) {
      const dfd = parent(name);
      try { rmTree(dfd, baseOf(name)); } finally { close(dfd); }
    },

    /** @param {string} from @param {string} to */
    rename(from, to) {
      const f = parent(from);
      try {
        const t = parent(to);
        try {
          fs.renameSync(`${fdPath(f)}/${baseOf(from)}`, `${fdPath(t)}/${baseOf(to)}`);
        } finally {
          close(t);
        }
      } finally {
        close(f);
      }
    },
  };
}
