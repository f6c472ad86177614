/* posenc-jupyterlab: the book's chapters read in JupyterLab as on the website.

   1. Folds. A solution (a code cell tagged "solution", every cell from a {solution-start} marker to
      its {solution-end}, a markdown cell that is one {solution} block) opens folded, source and
      output, and cells tagged hide-input / hide-output / hide-cell (and remove-*) open with that part
      folded: the rule of posenc.course.folding, applied on open, so a notebook saved without the
      flags still opens folded. JupyterLab unfolds a code cell's output and a markdown cell's text
      when it runs them; a part this rule folds stays folded through a run unless the reader had
      opened it, so Run All shows no answer, and a save keeps the flags.
   2. Numbers. jupyterlab-myst evaluates a markdown cell's {eval} roles when the cell runs, from
      the cell's rendered form; a cell that runs before JupyterLab has rendered it (Run All as soon
      as the notebook opens) gets no values. Such a cell is run again once it is rendered.
   3. Links. A {doc} link (jupyterlab-myst points it at /files/<name>, which JupyterLab cannot show)
      opens the chapter (<name>.ipynb) or page (<name>.md, as a preview) beside it; a {ref} whose
      target jupyterlab-myst leaves unresolved (a figure named in a code cell's metadata, an exercise
      in a cell not drawn yet) becomes a link, named by the exercise's title, that scrolls to the
      cell holding the label, in this notebook or in the one beside it that has it; so does a
      resolved one, whose target JupyterLab may not have drawn (notebook windowing). */
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { PageConfig, URLExt, PathExt } from '@jupyterlab/coreutils';

const SOURCE_TAGS = ['hide-input', 'remove-input', 'hide-cell', 'remove-cell'];
const OUTPUT_TAGS = ['hide-output', 'remove-output', 'hide-cell', 'remove-cell'];
const START = /^\s*[`:]{3,}\s*\{solution-start\}\s*(\S+)/m;
const END = /^\s*[`:]{3,}\s*\{solution-end\}/m;
const BLOCK = /^([`:]{3,})\s*\{solution\}[\s\S]*?^\1\s*$\n?/gm;
const EVAL = /\{eval\}`/;

function source(model) { return model.sharedModel.getSource(); }
function escaped(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }
function tags(model) { return model.getMetadata('tags') || []; }

/* Per cell model: {source: bool, outputs: bool}, as posenc.course.folding.expected_folds. */
export function expectedFolds(models) {
  let inside = false;
  return models.map(model => {
    const text = source(model), own = tags(model), markdown = model.type === 'markdown';
    let solution = false;
    if (markdown) {
      const start = START.test(text), end = END.test(text);
      if (start) inside = true;
      if (inside || start) { solution = true; if (end) inside = false; }
      else {
        BLOCK.lastIndex = 0;
        solution = BLOCK.test(text) && !text.replace(BLOCK, '').trim();
      }
    } else {
      solution = own.includes('solution') || inside;
    }
    const hideSource = solution || own.some(t => SOURCE_TAGS.includes(t));
    const hideOutputs = solution || own.some(t => OUTPUT_TAGS.includes(t));
    return {source: hideSource, outputs: hideOutputs && model.type === 'code'};
  });
}

function cellsOf(notebook) { return notebook.widgets.slice(); }

function applyFolds(notebook) {
  const cells = cellsOf(notebook);
  const folds = expectedFolds(cells.map(c => c.model));
  cells.forEach((cell, i) => {
    cell.posencFolds = folds[i];
    if (folds[i].source && !cell.inputHidden) cell.inputHidden = true;
    if (folds[i].outputs && !cell.outputHidden) cell.outputHidden = true;
  });
}

/* JupyterLab unfolds a code cell's output when it runs it, and a markdown cell's text when it runs
   (renders) it. A part the book folds that the reader has not opened is folded again at once. The
   reader's own state is recorded after every change that is not a run's (a microtask later: a run
   unfolds and reports in one synchronous step, so the record still holds the state before it). */
function reader(cell) {
  return {input: cell.inputHidden, output: cell.model.type === 'code' ? cell.outputHidden : false};
}

function refold(cell) {
  const folds = cell.posencFolds, before = cell.posencReader;
  if (!folds || !before) return;
  if (folds.source && before.input && !cell.inputHidden) cell.inputHidden = true;
  if (folds.outputs && before.output && !cell.outputHidden) cell.outputHidden = true;
}

function watchFolds(notebook) {
  cellsOf(notebook).forEach(cell => {
    if (cell.posencWatched) return;
    cell.posencWatched = true;
    cell.posencReader = reader(cell);
    cell.model.metadataChanged.connect(() => {
      if (cell.posencRunning) { refold(cell); return; }
      queueMicrotask(() => { if (!cell.isDisposed && !cell.posencRunning) cell.posencReader = reader(cell); });
    });
  });
}

function linkTarget(href) {
  /* the file a jupyterlab-myst link points at: ".../files/<path>" -> "<path>", else null */
  let url;
  try { url = new URL(href, window.location.href); } catch (e) { return null; }
  if (url.origin !== window.location.origin) return null;
  const files = URLExt.join(PageConfig.getBaseUrl(), 'files') + '/';
  const base = new URL(files, window.location.href).pathname;
  if (!url.pathname.startsWith(base)) return null;
  return {path: decodeURIComponent(url.pathname.slice(base.length)), hash: decodeURIComponent(url.hash.slice(1))};
}

/* The file a link without an extension means: <path>.ipynb or <path>.md, from a listing of its
   folder (asking for files that are not there would log 404s). */
async function withExtension(app, path) {
  if (PathExt.extname(path)) return path;
  try {
    const listing = await app.serviceManager.contents.get(PathExt.dirname(path), {content: true});
    const names = new Set(listing.content.map(item => item.path));
    return ['.ipynb', '.md'].map(ext => path + ext).find(candidate => names.has(candidate)) || path;
  } catch (e) {
    return path;
  }
}

/* The label a {ref} with this text points at, from the markdown cell's own source. */
function labelOf(text, cellSource) {
  const refs = /\{(?:ref|numref)\}`([^`]*)`/g;
  let found;
  while ((found = refs.exec(cellSource))) {
    const inner = found[1], angle = inner.match(/^([\s\S]*?)<([^<>]+)>\s*$/);
    const shown = angle ? angle[1].replace(/\s+/g, ' ').trim() : inner.trim();
    const label = angle ? angle[2].trim() : inner.trim();
    if (shown === text.replace(/\s+/g, ' ').trim() || label === text.trim()) return label;
  }
  return null;
}

/* The index of the cell that holds ``label`` in a notebook's JSON cells (or cell models), or -1. */
function cellWithLabel(cells, label) {
  const name = escaped(label);
  const target = new RegExp('^\\(' + name + '\\)=\\s*$|^\\s*:(?:name|label):\\s*' + name + '\\s*$', 'm');
  return cells.findIndex(c => {
    const text = typeof c.source === 'string' ? c.source : Array.isArray(c.source) ? c.source.join('') : source(c);
    const meta = c.metadata && !c.getMetadata ? c.metadata : {mystnb: c.getMetadata ? c.getMetadata('mystnb') : null};
    const figure = meta.mystnb && meta.mystnb.figure;
    return target.test(text) || (figure && figure.name === label);
  });
}

/* What a reference to ``label`` shows where jupyterlab-myst left it unresolved: the title of the
   exercise that carries the label ("Exercise: <title>"), else the label. */
function shownFor(models, label) {
  for (const model of models) {
    const text = source(model);
    const found = text.match(/^[`:]{3,}\s*\{exercise\}\s*(.*)$/m);
    if (found && new RegExp('^\\s*:label:\\s*' + escaped(label) + '\\s*$', 'm').test(text)) {
      return found[1].trim() ? 'Exercise: ' + found[1].trim() : 'the exercise';
    }
  }
  return label;
}

/* An unresolved reference becomes a link that works: its text named, focusable, Enter follows it. */
function decorate(notebook) {
  const models = notebook.widgets.map(c => c.model);
  notebook.widgets.forEach(cell => {
    if (cell.model.type !== 'markdown' || !cell.isAttached) return;
    cell.node.querySelectorAll('[title="Cross Reference Not Found"]').forEach(span => {
      if (span.dataset.posencLabel) return;
      const label = labelOf(span.textContent, source(cell.model));
      if (!label) return;
      span.dataset.posencLabel = label;
      span.removeAttribute('title');
      span.className = 'posenc-xref';
      span.setAttribute('role', 'link');
      span.tabIndex = 0;
      span.style.cssText = 'cursor:pointer;text-decoration:underline;color:var(--jp-content-link-color)';
      if (span.textContent.trim() === label) span.textContent = shownFor(models, label);
      span.addEventListener('keydown', event => { if (event.key === 'Enter') span.click(); });
    });
  });
}

/* Make cell ``index`` the active one and scroll it to the top. JupyterLab's default windowing puts
   the cells in the page a few at a time, and cannot scroll to one not there yet: wait for it. */
async function reveal(panel, index) {
  const notebook = panel.content, cell = notebook.widgets[index];
  if (!cell) return;
  notebook.activeCellIndex = index;
  for (let waited = 0; !cell.isAttached && waited < 5000; waited += 100) {
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  try { await notebook.scrollToItem(index, 'start'); } catch (e) { /* another scroll came first */ }
  cell.node.scrollIntoView({block: 'start'});
}

const plugin = {
  id: 'posenc-jupyterlab:chapters',
  description: "The book's chapters in JupyterLab: folded solutions, numbers after Run All, links between chapters.",
  autoStart: true,
  requires: [INotebookTracker, IDocumentManager],
  activate(app, tracker, docManager) {
    NotebookActions.executionScheduled.connect((_, {cell}) => { cell.posencRunning = true; });
    NotebookActions.executed.connect((_, {notebook, cell}) => {
      refold(cell);  // a markdown cell is unfolded just before this signal, a code cell's output at its start
      cell.posencRunning = false;
      if (cell.model.type === 'markdown' && EVAL.test(source(cell.model))) {
        if (cell.posencRerun) { cell.posencRerun = false; return; }  // the one run again below: never a loop
        watchEvaluation(notebook, cell);
      }
    });

    /* jupyterlab-myst answers a markdown cell's run with the values of its roles, asked of the kernel
       after every code cell queued before it. Once the kernel has been idle for a while and the
       values are still missing, the cell ran before JupyterLab drew it: mark it to run again. */
    function watchEvaluation(notebook, cell) {
      const started = Date.now();
      let idleSince = null;
      const look = () => {
        if (cell.isDisposed || cell.model.getMetadata('user_expressions')) return;
        const panel = notebook.parent, context = panel && panel.sessionContext;
        const kernel = context && context.session && context.session.kernel;
        const idle = !!kernel && kernel.status === 'idle';
        idleSince = idle ? (idleSince || Date.now()) : null;
        if (idle && Date.now() - idleSince >= 1500) {
          cell.posencEvalPending = true;
          retryEvals(notebook);
        } else if (Date.now() - started < 600000) {
          setTimeout(look, 250);
        }
      };
      setTimeout(look, 250);
    }

    function retryEvals(notebook) {
      const panel = notebook.parent;
      if (!panel || !panel.sessionContext) return;
      const pending = cellsOf(notebook).filter(c => c.posencEvalPending && c.isAttached && c.rendered);
      if (!pending.length) return;
      pending.forEach(c => { c.posencEvalPending = false; c.posencRerun = true; });
      // runs the cells as Run does (jupyterlab-myst evaluates their roles), without moving the reader
      NotebookActions.runCells(notebook, pending, panel.sessionContext);
    }

    async function open(path, hash) {
      const target = await withExtension(app, path);
      const factory = PathExt.extname(target) === '.md' ? 'Markdown Preview' : undefined;
      const widget = docManager.openOrReveal(target, factory);
      if (hash && widget && widget.context) {
        await widget.context.ready;
        const cells = widget.content && widget.content.widgets;
        if (cells) {
          const index = cellWithLabel(cells.map(c => c.model), hash);
          if (index >= 0) reveal(widget, index);
        }
      }
    }

    async function follow(panel, label) {
      const here = cellWithLabel(panel.content.widgets.map(c => c.model), label);
      if (here >= 0) { reveal(panel, here); return; }
      const folder = PathExt.dirname(panel.context.path);
      const listing = await app.serviceManager.contents.get(folder, {content: true});
      for (const item of listing.content.filter(i => i.type === 'notebook')) {
        const notebook = await app.serviceManager.contents.get(item.path, {content: true});
        if (cellWithLabel(notebook.content.cells, label) >= 0) return open(item.path, label);
      }
    }

    tracker.widgetAdded.connect((_, panel) => {
      const notebook = panel.content;
      panel.context.ready.then(() => {
        applyFolds(notebook);
        watchFolds(notebook);
        notebook.model.cells.changed.connect(() => { watchFolds(notebook); });
      });
      // a cell rendered after it ran: its roles are evaluated now
      const timer = setInterval(() => {
        if (panel.isDisposed) { clearInterval(timer); return; }
        if (cellsOf(notebook).some(c => c.posencEvalPending)) retryEvals(notebook);
      }, 400);
      // references jupyterlab-myst could not resolve (to an exercise in another cell) become links
      // as soon as they are drawn (again: a cell drawn anew draws them undecorated)
      let queued = false;
      const observer = new MutationObserver(() => {
        if (queued) return;
        queued = true;
        requestAnimationFrame(() => { queued = false; if (!panel.isDisposed) decorate(notebook); });
      });
      observer.observe(notebook.node, {childList: true, subtree: true});
      panel.disposed.connect(() => observer.disconnect());
      notebook.node.addEventListener('click', event => {
        const anchor = event.target.closest && event.target.closest('.jp-MarkdownCell a, .jp-MarkdownCell .posenc-xref, .jp-MarkdownCell [title="Cross Reference Not Found"]');
        if (!anchor) return;
        const href = anchor.getAttribute('href');
        const file = href ? linkTarget(href) : null;
        if (file) {
          event.preventDefault(); event.stopPropagation();
          open(file.path, file.hash);
          return;
        }
        if (href && href.startsWith('#') && href.length > 1) {
          // a reference jupyterlab-myst resolved: to a cell JupyterLab may not have drawn (windowing)
          const label = decodeURIComponent(href.slice(1));
          if (cellWithLabel(cellsOf(notebook).map(c => c.model), label) >= 0) {
            event.preventDefault(); event.stopPropagation();
            follow(panel, label);
          }
          return;
        }
        if (href && href !== '#') return;  // a link to the web: as it is
        const cell = anchor.closest('.jp-MarkdownCell');
        const widget = cellsOf(notebook).find(c => c.node === cell);
        const label = anchor.dataset.posencLabel || (widget && labelOf(anchor.textContent, source(widget.model)));
        if (!label) return;
        event.preventDefault(); event.stopPropagation();
        follow(panel, label);
      }, true);
    });
  },
};

export default plugin;
