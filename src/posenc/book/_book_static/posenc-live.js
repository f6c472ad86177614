/* A live explorer's figure in a kernel (posenc.book.live): an anywidget view that paints each state
   the kernel records (the model's "frame", posenc.book.webfigure.live_frame) over the figure's
   background (the model's "background", a PNG) with the website's painter (posencPainter,
   posenc-player.js); the model's "alt" is the canvas's text alternative.

   States ahead: the kernel also sends ("ahead" messages) the states one step away on each control;
   the view keeps every state it receives, keyed by each control's position (the model's
   "controls": a menu's index, an integer slider's value, a float slider's steps from its minimum),
   and when a control moves to a state it has, paints it at once, before the kernel answers. Once
   its controls are linked the view sends {ready: true}, and the kernel sends the states one step
   from the current one. A frame
   from the kernel is painted only if it is still the controls' state (the reader may have moved on).

   The canvas keeps the figure's own pixel size, scaled down in a narrow pane and never up. After
   each paint the view's element counts it in data-frames (tests/lab_driver.js and
   benchmarks/bench_jupyterlab.py wait for it) and its time in el.posencTimes; el.posencLive lets
   tests compare the canvas with the kernel's frame. */
async function render({model, el}) {
  var canvas = document.createElement('canvas'), ctx = canvas.getContext('2d'), bg = new Image();
  var frames = 0, states = new Map(), links = [], shown = null, off = [];
  el.classList.add('posenc-live-figure');
  el.posencTimes = [];
  canvas.setAttribute('role', 'img');
  canvas.style.cssText = 'display:block;max-width:100%;height:auto;background:#fff';
  function listen(target, event, handler) { target.on(event, handler); off.push(function () { target.off(event, handler); }); }
  function key() {  // as posenc.book.live._Position.now: a float slider off its grid is "off"
    return links.map(function (l) {
      var v = l.model.get(l.trait);
      if (!l.step) return v;
      var steps = (v - l.min) / l.step, nearest = Math.round(steps);
      return Math.abs(steps - nearest) < 1e-6 ? nearest : 'off';
    }).join(',');
  }
  function paint(frame) {
    if (!bg.complete || !bg.naturalWidth) return;  // bg.onload paints
    var t0 = performance.now();
    posencPainter(frame, ctx).draw(0, bg);
    shown = frame.key;
    el.posencTimes.push(performance.now() - t0);
    el.dataset.frames = String(++frames);
  }
  function fromKernel() {
    var frame = model.get('frame');
    states.set(frame.key, frame);
    if (!links.length || (frame.key === key() && frame.key !== shown)) paint(frame);
  }
  function moved() {
    var frame = states.get(key());
    if (frame && frame.key !== shown) paint(frame);
  }
  function message(msg) {
    if (msg.clear) { states.clear(); shown = null; }
    if (msg.ahead) for (var k in msg.ahead) states.set(k, msg.ahead[k]);
  }
  function background() {
    canvas.width = model.get('width'); canvas.height = model.get('height');
    canvas.style.width = model.get('width') + 'px';
    shown = null;
    bg.src = 'data:image/png;base64,' + model.get('background');
  }
  function alt() { canvas.setAttribute('aria-label', model.get('alt')); }
  bg.onload = function () { var frame = states.get(key()) || model.get('frame'); shown = null; paint(frame); };
  listen(model, 'change:frame', fromKernel);
  listen(model, 'change:background', background);
  listen(model, 'change:alt', alt);
  listen(model, 'msg:custom', message);
  // for tests: whether the canvas shows what the kernel's own frame of the controls' state paints
  // (null until that frame has come); a state painted ahead must be the kernel's, pixel for pixel
  el.posencLive = {
    key: key,
    matchesKernel: function () {
      var frame = model.get('frame');
      if (frame.key !== key() || frame.key !== shown) return null;
      var fresh = document.createElement('canvas');
      fresh.width = canvas.width; fresh.height = canvas.height;
      posencPainter(frame, fresh.getContext('2d')).draw(0, bg);
      var a = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      var b = fresh.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
      return true;
    },
  };
  el.appendChild(canvas);
  alt();
  states.set(model.get('frame').key, model.get('frame'));
  background();
  // link the controls: then a move paints a state the view has at once, and the kernel is told
  // to send the states one step away; without them every kernel frame is painted as it comes
  var specs = model.get('controls') || [], linked = [];
  try {
    for (var i = 0; i < specs.length; i++) {
      var control = await model.widget_manager.get_model(specs[i].id);
      linked.push({model: control, trait: specs[i].trait, min: specs[i].min, step: specs[i].step});
    }
    linked.forEach(function (l) { listen(l.model, 'change:' + l.trait, moved); });
    links = linked;
    model.send({ready: true});
  } catch (error) {
    links = [];
  }
  return function () { off.forEach(function (f) { f(); }); };
}
export default {render};
