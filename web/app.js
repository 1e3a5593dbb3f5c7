// The playground: one session at a time (memory or OPFS), its files, an
// editor, a console for any tool, the live event stream, and a slot for the
// program tool's script runner. The package runs the wasm in a dedicated
// Worker, so nothing here blocks the page while a tool runs.
import { createSession } from '/npm/src/entry-browser.mjs';

const $ = (sel) => document.querySelector(sel);
const SAMPLE = {
  'README.md': '# Playground\n\nThese files live in your browser. Edit one, save it, then grep for a word in the console.\n',
  'src/greet.js': 'export function greet(name) {\n  return `hello, ${name}`;\n}\n',
  'src/main.js': "import { greet } from './greet.js';\n\nconsole.log(greet('world'));\n",
};
const SCRIPT_SAMPLE = "// run(ctx, inputs) calls the workspace's tools through ctx; what it returns is the result.\nasync function run(ctx) {\n  const files = await ctx.glob('**/*.js');\n  const hits = await ctx.grep('hello');\n  return { summary: `${files.length} JavaScript files`, files, hits };\n}\n";

const state = {
  mode: localStorage.getItem('playground.mode') === 'opfs' ? 'opfs' : 'memory',
  root: localStorage.getItem('playground.root') || 'playground',
  session: null,
  defs: new Map(),
  file: null, // the path in the editor
  saved: '', // its content as last read or saved (as the textarea holds it)
  crlf: false, // the open file ends every line in CRLF: saved so again
  events: 0,
  generation: 0, // bumps on every session switch, to drop stale async work
  llm: null, // the chat's endpoint {baseURL, apiKey, model}, in memory only
  carry: null, // the memory workspace's files, carried into a reopened session
};
window.playground = state; // for curious people with devtools open

function setStatus(text, kind = '') {
  const el = $('#status');
  el.textContent = text;
  el.title = text;
  el.className = `pill ${kind}`;
}

// showBanner explains, in full, why no workspace is open; retry offers to
// open it again (a busy OPFS root frees up when the other tab closes it).
function showBanner(text, retry = false) {
  $('#banner-text').textContent = text;
  $('#banner-retry').hidden = !retry;
  $('#banner').hidden = false;
}
const hideBanner = () => { $('#banner').hidden = true; };

// openError says why createSession failed, in the user's terms.
function openError(e) {
  if (e?.code === 'WORKSPACE_BUSY') {
    return { status: 'OPFS root busy', banner: `The OPFS root “${state.root}” is open in another tab (or window) of this browser. One tab at a time can use a root: close it there, or choose another root, then try again.`, retry: true };
  }
  return { status: 'could not open', banner: `Could not open the workspace: ${e?.message ?? e}`, retry: false };
}

function renderMode() {
  for (const b of document.querySelectorAll('.segmented button')) b.classList.toggle('active', b.dataset.mode === state.mode);
  $('#root-field').hidden = state.mode !== 'opfs';
  $('#root').value = state.root;
}

// ---- session lifecycle -----------------------------------------------

async function openSession() {
  const gen = ++state.generation;
  renderMode();
  setStatus('starting…');
  const old = state.session;
  state.session = null;
  if (old) await old.close().catch(() => {});
  const workspace = state.mode === 'memory' ? { kind: 'memory', files: state.carry ?? SAMPLE } : { kind: 'opfs', root: state.root };
  state.carry = null;
  let s;
  try {
    s = await createSession({ workspace, ...webFetchOptions(), ...chatOptions() });
  } catch (e) {
    if (gen === state.generation && state.llm && /options\.llm/.test(e?.message ?? '')) {
      // A bad endpoint: say so by the chat, and open the workspace without it.
      state.llm = null;
      state.chatError = e.message;
      state.carry = workspace.files ?? null;
      return openSession();
    }
    if (gen === state.generation) {
      const { status, banner, retry } = openError(e);
      setStatus(status, 'bad');
      showBanner(banner, retry);
      renderTools();
      clearEditor();
      $('#tree').replaceChildren();
    }
    return;
  }
  if (gen !== state.generation) { s.close(); return; }
  hideBanner();
  state.session = s;
  markEvents(state.mode === 'memory' ? 'memory session opened' : `OPFS session “${state.root}” opened`);
  followEvents(s, gen);
  if (state.mode === 'opfs' && (await s.glob('**/*')).length === 0) {
    for (const [p, c] of Object.entries(SAMPLE)) await s.writeFile(p, c);
  }
  setStatus(state.mode === 'memory' ? 'memory workspace · gone on reload' : `OPFS “${state.root}” · kept across reloads`, 'ok');
  renderTools();
  await refreshTree();
  const keep = state.file && (await fileExists(state.file)) ? state.file : (await listFiles())[0];
  if (keep) await openFile(keep); else clearEditor();
  renderChat();
}

async function followEvents(s, gen) {
  depth = new Map();
  try {
    for await (const ev of s.events()) {
      if (gen !== state.generation) break;
      addEvent(ev);
    }
  } catch (_) { /* the session closed */ }
}

// ---- files --------------------------------------------------------------

async function listFiles() {
  if (!state.session) return [];
  return (await state.session.glob('**/*')).sort();
}

async function fileExists(p) {
  return (await listFiles()).includes(p);
}

async function refreshTree() {
  const files = await listFiles();
  const root = {};
  for (const f of files) {
    let node = root;
    const parts = f.split('/');
    parts.forEach((part, i) => {
      if (i === parts.length - 1) node[part] = f;
      else node = node[part] ??= {};
    });
  }
  const build = (node) => {
    const entries = Object.entries(node).sort(([a, av], [b, bv]) =>
      (typeof av === 'string') - (typeof bv === 'string') || a.localeCompare(b));
    return entries.map(([name, v]) => {
      const li = document.createElement('li');
      if (typeof v === 'string') {
        const b = document.createElement('button');
        b.className = 'file' + (v === state.file ? ' selected' : '');
        b.textContent = name;
        b.title = v;
        b.dataset.path = v;
        b.onclick = () => openFile(v);
        li.append(b);
      } else {
        li.className = 'dir';
        const label = document.createElement('span');
        label.textContent = name + '/';
        const ul = document.createElement('ul');
        ul.append(...build(v));
        li.append(label, ul);
      }
      return li;
    });
  };
  $('#tree').replaceChildren(...build(root));
  $('#tree-empty').hidden = files.length > 0;
}

// The editor holds a file's exact text (readText: not numbered, not cut).
// A textarea turns CRLF into LF, so a file whose every line ends in CRLF
// is saved with CRLF again; saving writes the exact bytes (writeBytes).
async function openFile(p) {
  if (isDirty() && !confirm(`Discard the unsaved changes to ${state.file}?`)) return;
  let text;
  try {
    text = await state.session.readText(p);
  } catch (e) {
    showResult(e.result ?? { exitCode: 1, output: `${e.code ?? 'ERROR'}: ${e.message}` });
    return;
  }
  state.file = p;
  state.crlf = text.includes('\r\n') && !/(^|[^\r])\n/.test(text);
  $('#editor').value = text;
  state.saved = $('#editor').value; // as the textarea holds it
  $('#editor').disabled = false;
  $('#editor-path').textContent = p;
  for (const b of document.querySelectorAll('.tree .file')) b.classList.toggle('selected', b.dataset.path === p);
  renderDirty();
}

function clearEditor() {
  state.file = null;
  state.saved = '';
  $('#editor').value = '';
  $('#editor').disabled = true;
  $('#editor-path').textContent = '';
  renderDirty();
}

const isDirty = () => state.file !== null && $('#editor').value !== state.saved;

function renderDirty() {
  const dirty = isDirty();
  $('#save').disabled = !dirty;
  const el = $('#editor-state');
  el.textContent = state.file === null ? '' : dirty ? 'unsaved changes' : 'saved';
  el.classList.toggle('dirty', dirty);
}

async function save() {
  if (!isDirty()) return;
  const text = $('#editor').value;
  const r = await state.session.writeBytes(state.file, new TextEncoder().encode(state.crlf ? text.replace(/\n/g, '\r\n') : text));
  if (r.exitCode !== 0) { showResult(r); return; }
  state.saved = text;
  renderDirty();
  $('#editor-state').textContent = 'saved ✓';
}

async function createFile(p) {
  p = p.trim();
  if (!p) return;
  const r = await state.session.writeFile(p, '');
  if (r.exitCode !== 0) { showResult(r); return; }
  await refreshTree();
  await openFile(p);
  $('#editor').focus();
}

// ---- tool console --------------------------------------------------------

function renderTools() {
  const s = state.session;
  if (!s) {
    state.defs = new Map();
    $('#tool').replaceChildren();
    $('#tool-desc').textContent = '';
    $('#schema').textContent = '';
    $('#script-ui').hidden = true;
    $('#script-missing').hidden = false;
    $('#script-missing').textContent = 'No workspace is open, so there is nothing to run scripts against.';
    return;
  }
  const defs = s.toolDefinitions();
  state.defs = new Map(defs.map((d) => [d.name, d]));
  const sel = $('#tool');
  const keep = sel.value;
  sel.replaceChildren(...s.toolNames().map((n) => Object.assign(document.createElement('option'), { value: n, textContent: n })));
  sel.value = state.defs.has(keep) ? keep : (state.defs.has('grep') ? 'grep' : defs[0]?.name);
  renderSchema();
  const hasProgram = state.defs.has('program');
  $('#script-ui').hidden = !hasProgram;
  $('#script-missing').hidden = hasProgram;
  if (!hasProgram) $('#script-missing').textContent = 'This session has no program tool (the host offers no engine for scripts).';
}

// exampleArgs fills the required parameters with arguments that pass the
// tool's schema and work on the open file (edit and patch change its first
// line; write goes to a new file, never over one).
async function exampleArgs(def) {
  const file = state.file ?? 'README.md';
  let first = '';
  if (def.name === 'edit' || def.name === 'patch') {
    first = (await state.session.readText(file).catch(() => '')).split(/\r?\n/)[0];
  }
  switch (def.name) {
    case 'read': return { file_path: file };
    case 'write': return { file_path: 'notes.txt', content: 'a note\n' };
    case 'edit': return first ? { file_path: file, old_string: first, new_string: `${first} (edited)` } : { file_path: file, old_string: 'hello', new_string: 'hi' };
    case 'patch': return { file_path: file, diff: `--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-${first}\n+${first} (patched)\n` };
    case 'batch': return { invocations: [{ tool: 'read', args: { file_path: file } }, { tool: 'grep', args: { pattern: 'hello' } }] };
    case 'program': return { type: 'script', language: 'javascript', source: SCRIPT_SAMPLE };
    case 'web_fetch': return { url: new URL('/', location.href).href, max_chars: 2000 };
  }
  const props = def.parameters?.properties ?? {};
  const out = {};
  for (const name of def.parameters?.required ?? []) {
    const t = props[name]?.type;
    if (name === 'file_path' || name === 'path') out[name] = file;
    else if (name === 'pattern') out[name] = def.name === 'glob' ? '**/*.js' : 'hello';
    else if (t === 'string') out[name] = props[name]?.enum?.[0] ?? 'x';
    else if (t === 'integer' || t === 'number') out[name] = props[name]?.minimum ?? 1;
    else if (t === 'boolean') out[name] = false;
    else if (t === 'array') out[name] = [];
    else out[name] = {};
  }
  return out;
}

async function renderSchema() {
  const def = state.defs.get($('#tool').value);
  if (!def) return;
  $('#tool-desc').textContent = def.description;
  $('#schema').textContent = JSON.stringify(def.parameters, null, 2);
  $('#args').value = JSON.stringify(await exampleArgs(def), null, 2);
}

function showResult(r) {
  const exit = $('#result-exit');
  exit.textContent = `exit ${r.exitCode}`;
  exit.className = `pill ${r.exitCode === 0 ? 'ok' : 'bad'}`;
  let text = r.output;
  if (r.metadataJson) text += `\n\n── metadata ──\n${JSON.stringify(JSON.parse(r.metadataJson), null, 2)}`;
  if (r.errorKindJson) text += `\n\n── error kind ──\n${r.errorKindJson}`;
  $('#result').textContent = text;
}

async function runTool() {
  const name = $('#tool').value;
  let args;
  try {
    args = JSON.parse($('#args').value || '{}');
  } catch (e) {
    showResult({ exitCode: 1, output: `The arguments are not valid JSON: ${e.message}` });
    return;
  }
  $('#run').disabled = true;
  $('#run-state').textContent = `running ${name}…`;
  const t0 = performance.now();
  try {
    const r = await state.session.tool(name, args);
    showResult(r);
    $('#run-state').textContent = `${name} took ${Math.round(performance.now() - t0)} ms`;
  } catch (e) {
    showResult({ exitCode: 1, output: `${e.code ?? 'ERROR'}: ${e.message}` });
    $('#run-state').textContent = '';
  } finally {
    $('#run').disabled = false;
  }
  // Tools that only look need no refresh (and add no events of our own).
  if (['read', 'grep', 'glob', 'ls'].includes(name)) return;
  await refreshTree();
  if (state.file && !isDirty() && (await fileExists(state.file))) await openFile(state.file);
}

// ---- events ------------------------------------------------------------

// Delegation nests in the event view: a subagent_start opens a level under
// the call that delegated it (parentId: the task call); the child's own
// events carry its task id as invocationId, its tool calls as parentId, so
// each event sits one level under what caused it. depth maps an id to its
// level and the task it runs in; a new session starts it afresh.
let depth = new Map(); // id -> {d, task}

function levelOf(ev) {
  if (ev.type === 'subagent_start') {
    const at = { d: (depth.get(ev.parentId)?.d ?? 0) + 1, task: ev.invocationId };
    depth.set(ev.invocationId, at);
    return at;
  }
  const at = depth.get(ev.invocationId) ?? depth.get(ev.parentId) ?? { d: 0 };
  if (at.d > 0 && ev.invocationId && !depth.has(ev.invocationId)) depth.set(ev.invocationId, at);
  return at;
}

function describe(ev) {
  const parts = [];
  if (ev.type?.startsWith('subagent_')) {
    const p = ev.payload ?? {};
    parts.push([p.agent, p.task_id, p.status, p.success === undefined ? p.description : p.success ? 'succeeded' : 'failed'].filter(Boolean).join(' '));
    if (p.metadata) parts.push(JSON.stringify(p.metadata).slice(0, 120));
    return parts.join(' · ');
  }
  if (ev.toolName) parts.push(ev.toolName);
  if (ev.exitCode !== undefined) parts.push(`exit ${ev.exitCode}`);
  const text = ev.text ?? ev.toolOutput;
  if (text) parts.push(String(text).split('\n')[0].slice(0, 120));
  if (parts.length === 0 && ev.payload) parts.push(JSON.stringify(ev.payload).slice(0, 120));
  return parts.join(' · ');
}

function addEvent(ev) {
  state.events++;
  $('#event-count').textContent = String(state.events);
  const li = document.createElement('li');
  const t = new Date(ev.timeMs ?? Date.now());
  const type = ev.type ?? 'event';
  const cls = /start/.test(type) ? 'start' : /end/.test(type) ? (ev.exitCode ? 'bad' : 'end') : /error|denied|timeout/.test(type) ? 'bad' : '';
  li.innerHTML = '<span class="t"></span><span class="type"></span><span class="what"></span>';
  li.children[0].textContent = t.toTimeString().slice(0, 8);
  li.children[1].textContent = type;
  li.children[1].className = `type ${cls}`;
  li.children[2].textContent = describe(ev);
  li.title = JSON.stringify(ev, null, 2);
  li.dataset.type = type;
  const { d, task } = levelOf(ev);
  if (d > 0) {
    li.dataset.depth = String(d);
    li.dataset.task = task;
    li.classList.add('sub');
    li.style.setProperty('--depth', String(d));
    if (!type.startsWith('subagent_')) li.children[2].textContent = `${task} · ${li.children[2].textContent}`;
  }
  const list = $('#event-list');
  list.prepend(li);
  while (list.children.length > 500) list.lastChild.remove();
}

function markEvents(text) {
  const li = document.createElement('li');
  li.className = 'mark';
  li.textContent = text;
  $('#event-list').prepend(li);
}

// ---- script runner (the program tool) -------------------------------------

async function runScript() {
  $('#run-script').disabled = true;
  $('#script-state').textContent = 'running…';
  try {
    const r = await state.session.tool('program', { type: 'script', language: 'javascript', source: $('#script').value });
    $('#script-result').textContent = r.output;
    $('#script-state').textContent = `exit ${r.exitCode}`;
  } catch (e) {
    $('#script-result').textContent = `${e.code ?? 'ERROR'}: ${e.message}`;
    $('#script-state').textContent = '';
  } finally {
    $('#run-script').disabled = false;
  }
}

// ---- chat (the agent loop) --------------------------------------------------

// webFetchOptions let web_fetch read the playground's own origin (the page
// can fetch it anyway; loopback is refused otherwise), so its pre-filled
// URL works when the playground is served from 127.0.0.1.
function webFetchOptions() {
  return /^https?:$/.test(location.protocol) ? { webFetch: { allowOrigins: [location.origin] } } : {};
}

// chatOptions are the session options of a connected chat: the endpoint,
// read-only tools allowed, every other call of the model asked of the user.
function chatOptions() {
  if (!state.llm) return {};
  const { baseURL, apiKey, model } = state.llm;
  return {
    llm: { provider: 'openai', baseURL, model, maxRetries: 1, ...(apiKey ? { apiKey } : {}) },
    systemPrompt: 'You are a coding assistant working on the files of this workspace. Use the tools to look before you answer.',
    permissionPolicy: { allow: ['read', 'grep', 'glob', 'ls'], defaultDecision: 'ask' },
    confirmationHandler: (req) => confirm(`The model wants to run ${req.toolName}:\n${JSON.stringify(req.args, null, 2).slice(0, 600)}\n\nAllow it?`),
  };
}

function renderChat() {
  const on = !!(state.llm && state.session);
  $('#chat-prompt').disabled = !on;
  $('#chat-send').disabled = !on;
  const el = $('#chat-state');
  el.textContent = on ? `connected · ${state.llm.model}` : state.chatError ?? '';
  el.title = el.textContent;
  el.className = on ? 'pill ok' : state.chatError ? 'pill bad' : 'pill';
}

function chatLine(kind, text) {
  const div = document.createElement('div');
  div.className = `msg ${kind}`;
  div.textContent = text;
  $('#chat-log').append(div);
  div.scrollIntoView({ block: 'nearest' });
  return div;
}

// snapshot reads the memory workspace's files, exactly, to carry them into
// the session a new endpoint reopens.
async function snapshot() {
  return state.session.exportFiles();
}

async function connectChat(e) {
  e.preventDefault();
  const baseURL = $('#chat-url').value.trim() || 'https://api.openai.com/v1';
  const model = $('#chat-model').value.trim();
  if (!model) { $('#chat-model').focus(); return; }
  if (isDirty() && !confirm('Discard unsaved changes?')) return;
  if (state.mode === 'memory' && state.session) state.carry = await snapshot();
  state.llm = { baseURL, apiKey: $('#chat-key').value, model };
  state.chatError = null;
  await openSession();
}

async function sendChat(e) {
  e?.preventDefault();
  const prompt = $('#chat-prompt').value.trim();
  const s = state.session;
  if (!prompt || !s || !state.llm) return;
  chatLine('user', prompt);
  $('#chat-prompt').value = '';
  const ac = new AbortController();
  $('#chat-send').disabled = true;
  $('#chat-stop').hidden = false;
  $('#chat-stop').onclick = () => ac.abort();
  let run = null;
  let bubble = null;
  try {
    for await (const ev of s.stream(prompt, undefined, { signal: ac.signal })) {
      switch (ev.type) {
        case 'agent_start': run ??= ev.invocationId; break;
        case 'turn_start': bubble = null; break;
        case 'text_delta':
          if (ev.invocationId !== run) break; // a delegated agent's: its report arrives as subagent_end
          bubble ??= chatLine('assistant', '');
          bubble.textContent += ev.text;
          bubble.scrollIntoView({ block: 'nearest' });
          break;
        case 'tool_end':
          if (ev.parentId === run) {
            chatLine(`tool${ev.exitCode ? ' bad' : ''}`, `${ev.toolName} ${JSON.stringify(ev.payload.args ?? {})} → exit ${ev.exitCode}`);
            bubble = null;
          }
          break;
        case 'subagent_start':
          chatLine('tool sub', `↳ ${ev.payload.agent} agent: ${ev.payload.description}`);
          bubble = null;
          break;
        case 'subagent_end':
          chatLine(`tool sub${ev.payload.success ? '' : ' bad'}`, `↳ ${ev.payload.agent} agent ${ev.payload.success ? 'reported' : 'failed'}: ${String(ev.payload.output || ev.payload.error || '').split('\n')[0].slice(0, 160)}`);
          bubble = null;
          break;
        case 'error': if (ev.invocationId === run) chatLine('error', ev.text); break;
      }
    }
  } catch (err) {
    chatLine('error', `${err.code ?? 'ERROR'}: ${err.message}`);
  } finally {
    $('#chat-stop').hidden = true;
    renderChat();
    if (s === state.session) await refreshTree();
  }
}

// ---- wiring --------------------------------------------------------------

for (const b of document.querySelectorAll('.segmented button')) {
  b.onclick = () => {
    if (b.dataset.mode === state.mode) return;
    if (isDirty() && !confirm('Discard unsaved changes?')) return;
    state.mode = b.dataset.mode;
    localStorage.setItem('playground.mode', state.mode);
    state.file = null;
    openSession();
  };
}
$('#root').onchange = () => {
  const r = $('#root').value.trim();
  if (!r || r === state.root) return;
  state.root = r;
  localStorage.setItem('playground.root', r);
  state.file = null;
  openSession();
};
$('#new-file').onclick = () => {
  const f = $('#new-file-form');
  f.hidden = !f.hidden;
  if (!f.hidden) $('#new-file-path').focus();
};
$('#new-file-form').onsubmit = async (e) => {
  e.preventDefault();
  await createFile($('#new-file-path').value);
  $('#new-file-path').value = '';
  $('#new-file-form').hidden = true;
};
$('#refresh').onclick = () => refreshTree();
$('#editor').oninput = renderDirty;
$('#save').onclick = save;
$('#tool').onchange = renderSchema;
$('#run').onclick = runTool;
$('#clear-events').onclick = () => { $('#event-list').replaceChildren(); state.events = 0; $('#event-count').textContent = '0'; };
$('#script').value = SCRIPT_SAMPLE;
$('#banner-retry').onclick = () => openSession();
$('#run-script').onclick = runScript;
$('#chat-connect').onsubmit = connectChat;
$('#chat-form').onsubmit = sendChat;
$('#chat-prompt').onkeydown = (e) => { if (e.key === 'Enter' && !e.shiftKey) sendChat(e); };
document.addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key === 's') { e.preventDefault(); save(); }
  if ((e.ctrlKey || e.metaKey) && e.key === 'Enter' && document.activeElement === $('#args')) { e.preventDefault(); runTool(); }
});
window.addEventListener('beforeunload', (e) => { if (isDirty()) e.preventDefault(); });

openSession();
