// What tests/lab_driver.py asks of a JupyterLab page: loaded into every page as an init script,
// called as posencLab.<name>(...) through Playwright's page.evaluate.
window.posencLab = {
  // the open notebook's own node: queries never reach another tab's cells
  root() {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    return (w && w.node) || document;
  },

  kernelIdle() {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return !!k && k.status === 'idle';
  },

  // the open notebook's cell widgets (JupyterLab's own objects: window.jupyterapp)
  cells() {
    return window.jupyterapp.shell.currentWidget.content.widgets;
  },

  // per cell: whether its source and its output are folded (null: a cell without an output area)
  folds() {
    return this.cells().map(c => ({source: c.inputHidden, outputs: c.model.type === 'code' ? c.outputHidden : null}));
  },

  // per markdown cell with an {eval} role: its index and whether jupyterlab-myst stored the values
  evaluated() {
    return this.cells().map((c, i) => ({i, source: c.model.sharedModel.getSource(), done: !!c.model.getMetadata('user_expressions')}))
      .filter(c => this.cells()[c.i].model.type === 'markdown' && /\{eval\}`/.test(c.source))
      .map(c => ({i: c.i, done: c.done}));
  },

  // what the rendered prose links to: each link into the served files (a {doc} link), each reference
  // jupyterlab-myst left unresolved and the book's extension has not made a link, each image's size
  links() {
    const prose = '.jp-MarkdownCell';
    const files = Array.from(this.root().querySelectorAll(prose + ' a[href*="/files/"]'))
      .map(a => decodeURIComponent(new URL(a.href).pathname.replace(/^.*?\/files\//, '')));
    const unresolved = Array.from(this.root().querySelectorAll(prose + ' [title="Cross Reference Not Found"]'))
      .map(e => e.textContent);
    const images = Array.from(this.root().querySelectorAll(prose + ' img'))
      .map(i => ({src: i.getAttribute('src'), width: i.naturalWidth, complete: i.complete}));
    return {files, unresolved, images, xrefs: this.root().querySelectorAll(prose + ' .posenc-xref').length};
  },

  prompts() {
    return Array.from(this.root().querySelectorAll('.jp-Notebook .jp-InputPrompt')).map(e => e.textContent);
  },

  // every cell ran: no "[*]" prompt and the kernel idle
  allRun() {
    return this.kernelIdle() && !this.prompts().some(p => p.includes('*'));
  },

  // the rendered text of each markdown cell, math replaced by "[math]"
  prose() {
    return Array.from(this.root().querySelectorAll('.jp-MarkdownCell .jp-InputArea > .myst, .jp-MarkdownCell .jp-MarkdownOutput')).map(e => {
      const c = e.cloneNode(true);
      c.querySelectorAll('mjx-container, .MathJax, .katex, math').forEach(m => m.replaceWith('[math]'));
      return c.textContent;
    });
  },

  // what jupyterlab-myst draws instead of a number or a directive it could not render: the inline
  // error box of an {eval} that raised, and the dropdown titled "... - Unknown Directive"
  proseErrors() {
    const boxes = Array.from(this.root().querySelectorAll(
      '.jp-MarkdownCell [data-mime-type="application/vnd.jupyter.stderr"]')).map(e => e.textContent.slice(0, 200));
    const unknown = this.prose().filter(t => /Unknown Directive|Unknown Role/i.test(t)).map(t => t.slice(0, 200));
    return boxes.concat(unknown);
  },

  // stderr and error outputs (a traceback is one)
  errorOutputs() {
    const selector = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]';
    return Array.from(this.root().querySelectorAll(selector)).map(e => e.textContent.slice(0, 300));
  },

  // an explorer's figure: the live canvas (posenc.book.live) or, without anywidget, a PNG image
  FIGURE: '.posenc-live-figure, .widget-image',

  // per code cell: the start of its source, how many widget figures and controls its output holds,
  // and any "Could not redraw" message an explorer wrote
  codeCells() {
    return Array.from(this.root().querySelectorAll('.jp-Notebook .jp-CodeCell')).map(cell => {
      const editor = cell.querySelector('.jp-InputArea-editor') || cell;
      const out = cell.querySelector('.jp-OutputArea');
      return {
        source: editor.textContent.slice(0, 200),
        images: out ? out.querySelectorAll(this.FIGURE).length : 0,
        controls: out ? out.querySelectorAll('.widget-hslider, .widget-dropdown').length : 0,
        redrawErrors: out ? Array.from(out.querySelectorAll('.widget-html'))
          .map(e => e.textContent).filter(t => t.includes('Could not redraw')) : [],
      };
    });
  },

  explorers() {
    return Array.from(this.root().querySelectorAll('.jp-OutputArea .widget-vbox'))
      .filter(b => b.querySelector(this.FIGURE));
  },

  // how many controls each live explorer has
  explorerControls() {
    return this.explorers().map(b => b.querySelectorAll('.widget-hslider, .widget-dropdown').length);
  },

  // the figure's size as drawn and as made (CSS pixels against the canvas's or the PNG's own pixels)
  figureSizes() {
    return this.explorers().map(b => {
      const canvas = b.querySelector('.posenc-live-figure canvas');
      if (canvas) return {shown: canvas.getBoundingClientRect().width, natural: canvas.width, live: true};
      const img = b.querySelector('.widget-image');
      return {shown: img.getBoundingClientRect().width, natural: img.naturalWidth, live: false};
    });
  },

  // per live explorer: whether its canvas shows what the kernel's own frame of the controls' state
  // paints (null while that frame has not come)
  liveMatches() {
    return this.explorers().map(b => {
      const live = b.querySelector('.posenc-live-figure');
      return live && live.posencLive ? live.posencLive.matchesKernel() : null;
    });
  },

  // per control: its label, the width of its slider track (null for a menu), and the gap from the
  // end of its readout (or menu) to the start of the next control on the same row (null if none)
  controlLayout() {
    return this.explorers().map(b => {
      const controls = Array.from(b.querySelectorAll('.widget-hslider, .widget-dropdown'));
      return controls.map((c, i) => {
        const track = c.querySelector('.slider-container');
        const end = (c.querySelector('.widget-readout') || c.querySelector('select') || c).getBoundingClientRect();
        const next = controls[i + 1] && controls[i + 1].getBoundingClientRect();
        const sameRow = next && Math.abs(next.top - c.getBoundingClientRect().top) < 4;
        return {
          label: (c.querySelector('.widget-label') || {}).textContent || '',
          track: track ? track.getBoundingClientRect().width : null,
          gap: sameRow ? next.left - end.right : null,
        };
      });
    });
  },

  // Move control k of explorer e once, as a reader with the keyboard does: a slider one step with
  // the arrow keys (towards the side it can move to), a menu to its next option. Timed from the input
  // event to the new figure painted: the animation frame after the live canvas counts a new frame
  // (its data-frames), or after a new PNG is decoded.
  // Resolves to {ms, label, kind, before, after}, or {timeout: true} when no new figure comes in 15 s.
  async move(e, k) {
    const box = this.explorers()[e];
    const live = box.querySelector('.posenc-live-figure');
    const img = live ? null : box.querySelector('.widget-image');
    const control = box.querySelectorAll('.widget-hslider, .widget-dropdown')[k];
    const label = (control.querySelector('.widget-label') || {}).textContent || '';
    const select = control.querySelector('select');
    const readout = () => select ? select.value : (control.querySelector('.widget-readout') || {}).textContent;
    control.scrollIntoView({block: 'center'});
    const before = readout();
    const mark = live ? live.dataset.frames : img.src;
    const painted = new Promise(resolve => {
      const observer = new MutationObserver(() => {
        if ((live ? live.dataset.frames : img.src) === mark) return;
        observer.disconnect();
        clearTimeout(timer);
        const decoded = live ? Promise.resolve() : img.decode().catch(() => null);
        decoded.then(() => requestAnimationFrame(() => resolve(performance.now())));
      });
      const timer = setTimeout(() => { observer.disconnect(); resolve(null); }, 15000);
      observer.observe(live || img, {attributes: true, attributeFilter: [live ? 'data-frames' : 'src']});
    });
    let t0;
    if (select) {
      const next = (select.selectedIndex + 1) % select.options.length;
      t0 = performance.now();
      select.selectedIndex = next;
      select.dispatchEvent(new Event('change', {bubbles: true}));
    } else {
      const handle = control.querySelector('.noUi-handle');
      const now = Number(handle.getAttribute('aria-valuenow'));
      const max = Number(handle.getAttribute('aria-valuemax'));
      const key = now >= max ? 'ArrowLeft' : 'ArrowRight';
      handle.focus();
      t0 = performance.now();
      handle.dispatchEvent(new KeyboardEvent('keydown', {key, code: key, bubbles: true, cancelable: true}));
    }
    const done = await painted;
    if (done === null) return {timeout: true, label, before};
    return {ms: done - t0, label, kind: select ? 'menu' : 'slider', before, after: readout()};
  },
};
