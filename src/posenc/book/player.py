"""The website's form of an :class:`~posenc.book.widgets.Explorer`: a self-contained player.

Where no kernel runs, an explorer is shown as the same figure precomputed for the frames
of its main control, PNG images inlined in the page, with a labelled range slider, a play
button and the current value; the image's alt text follows the frame. The HTML and its
small script load nothing from other hosts.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Sequence

__all__ = ["static_player", "player_html"]


def static_player(explorer) -> str:
    """The player of ``explorer``: every frame of its main control, other controls at their defaults."""
    from .widgets import _format

    control = explorer.controls[explorer.animate]
    defaults = {name: c.value for name, c in explorer.controls.items()}
    frames, labels, alts = [], [], []
    start = defaults[explorer.animate]
    for value in explorer.frames:
        values = dict(defaults, **{explorer.animate: value})
        explorer.values = dict(values)
        explorer._draw(values)
        frames.append(explorer._png(compress_level=9, palette=True))
        labels.append(_format(explorer.animate, control, explorer.values[explorer.animate]))
        alts.append(explorer.alt_text(values))
    initial = min(range(len(explorer.frames)), key=lambda i: _distance(explorer.frames[i], start))
    explorer.values = defaults
    return player_html(frames, labels, alts, control.label or explorer.animate, initial, explorer.caption)


def _distance(a, b) -> float:
    try:
        return abs(float(a) - float(b))
    except (TypeError, ValueError):
        return 0.0 if a == b else 1.0


_PLAYER_CSS = """
.posenc-player{margin:1em 0;max-width:100%}
.posenc-player img{max-width:100%;height:auto;display:block;background:#fff}
.posenc-player .pp-controls{display:flex;flex-wrap:wrap;align-items:center;gap:.6em;margin:.4em 0}
.posenc-player button{font:inherit;padding:.2em .8em;border:1px solid currentColor;border-radius:4px;
background:transparent;color:inherit;cursor:pointer}
.posenc-player input[type=range]{flex:1 1 12em;min-width:10em}
.posenc-player output{font-variant-numeric:tabular-nums;min-width:9em}
.posenc-player figcaption{font-size:.9em;margin-top:.3em;color:inherit}
"""

_PLAYER_JS = """
(function(){
var root=document.getElementById(%(id)s), d=%(data)s;
var img=root.querySelector('img'), range=root.querySelector('input'), out=root.querySelector('output'),
    play=root.querySelector('button'), timer=null;
function show(i){i=Math.max(0,Math.min(d.frames.length-1,i|0));img.src='data:image/png;base64,'+d.frames[i];
  img.alt=d.alts[i];out.textContent=d.labels[i];range.value=i;range.setAttribute('aria-valuetext',d.labels[i]);}
function stop(){if(timer){clearInterval(timer);timer=null;play.textContent='Play';
  play.setAttribute('aria-pressed','false');}}
range.addEventListener('input',function(){stop();show(+range.value);});
play.addEventListener('click',function(){if(timer){stop();return;}
  play.textContent='Pause';play.setAttribute('aria-pressed','true');
  timer=setInterval(function(){var i=+range.value+1;if(i>=d.frames.length){stop();return;}show(i);},%(interval)d);
  if(+range.value>=d.frames.length-1)show(0);});
show(%(initial)d);
})();
"""


def player_html(
    frames: Sequence[bytes],
    labels: Sequence[str],
    alts: Sequence[str],
    control_label: str,
    initial: int = 0,
    caption: str | None = None,
    interval_ms: int = 700,
) -> str:
    """A self-contained HTML player over PNG ``frames``: a labelled range slider, a play button and
    the current value, the image's alt text following the frame. No external resources."""
    if not (len(frames) == len(labels) == len(alts)) or not frames:
        raise ValueError("player_html needs as many labels and alt texts as frames, and at least one frame")
    encoded = [base64.b64encode(f).decode("ascii") for f in frames]
    digest = hashlib.sha1("".join(encoded).encode()).hexdigest()[:10]  # deterministic id
    element_id = f"posenc-player-{digest}"
    data = json.dumps({"frames": encoded, "labels": list(labels), "alts": list(alts)})
    initial = min(max(int(initial), 0), len(frames) - 1)
    script = _PLAYER_JS % {"id": json.dumps(element_id), "data": data, "initial": initial, "interval": interval_ms}
    caption_html = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return (
        f"<style>{_PLAYER_CSS}</style>"
        f'<figure class="posenc-player" id="{element_id}">'
        f'<img src="data:image/png;base64,{encoded[initial]}" alt="{html.escape(alts[initial])}" '
        f'width="{_png_width(frames[initial])}">'
        f'<div class="pp-controls"><button type="button" aria-pressed="false">Play</button>'
        f'<label for="{element_id}-range">{html.escape(control_label)}</label>'
        f'<input type="range" id="{element_id}-range" min="0" max="{len(frames) - 1}" step="1" value="{initial}" '
        f'aria-valuetext="{html.escape(labels[initial])}">'
        f'<output for="{element_id}-range" aria-live="polite">{html.escape(labels[initial])}</output></div>'
        f"{caption_html}</figure><script>{script}</script>"
    )


def _png_width(png: bytes) -> int:
    return int.from_bytes(png[16:20], "big")  # the IHDR chunk of a PNG file
