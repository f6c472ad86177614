"""The website's form of an :class:`~posenc.book.widgets.Explorer`: every control, redrawn in the browser.

Where no kernel runs, an explorer becomes a figure that the page's script redraws on a canvas:
the figure's background as one PNG, and its moving parts recorded by posenc at build time over a
grid of every control's values (:mod:`posenc.book.webfigure`). Each control is a labelled range
slider (or a menu) with its value shown beside it; a play button steps the main control; the
canvas's text alternative follows the state. Before the script runs (or without it) the figure in
its default state is an ordinary image. Nothing is loaded from other hosts.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json

from .._validation import check_int
from .browser_formulas import FORMULAS_JS
from .webfigure import figure_data

__all__ = ["static_player", "explorer_html"]


def static_player(explorer) -> str:
    """The website's form of ``explorer``: its figure over a grid of every control's values."""
    return explorer_html(figure_data(explorer), explorer.caption)


_CSS = """
.posenc-explorer{margin:1em 0;max-width:100%}
.posenc-explorer img,.posenc-explorer canvas{max-width:100%;height:auto;display:block;background:#fff}
.posenc-explorer .pe-controls{display:grid;grid-template-columns:max-content minmax(8em,1fr) minmax(6em,max-content);
gap:.35em .7em;align-items:center;margin:.5em 0}
.posenc-explorer .pe-controls[hidden],.posenc-explorer [hidden]{display:none}
.posenc-explorer button{font:inherit;padding:.15em .8em;border:1px solid currentColor;border-radius:4px;
background:transparent;color:inherit;cursor:pointer;grid-column:1/-1;justify-self:start}
.posenc-explorer input[type=range]{width:100%;margin:0}
.posenc-explorer select{font:inherit;max-width:100%;grid-column:2/-1;color:inherit;background:transparent}
.posenc-explorer select option{color:#000;background:#fff}
.posenc-explorer output{font-variant-numeric:tabular-nums}
.posenc-explorer figcaption{font-size:.9em;margin-top:.3em;color:inherit}
"""

# The renderer: a state is one value index per control; the table names, for each state, the
# record of every moving artist and the alt text. Records are drawn in the order update() returns
# them, over the background, as matplotlib blits them in a live kernel.
_JS = r"""
(function(){
"use strict";
var root=document.getElementById(%(id)s), S=%(data)s;
function bytes(s){var b=atob(s),a=new Uint8Array(b.length);for(var i=0;i<b.length;i++)a[i]=b.charCodeAt(i);return a;}
var XY=new Int16Array(bytes(S.xy).buffer), PX=bytes(S.px), T=bytes(S.table).buffer;
var TABLE=S.wide?new Uint32Array(T):new Uint16Array(T), ROW=S.artists+1, C=S.controls;
S.items=S.items.map(function(it){return Object.assign({},S.styles[it.s],it);}); // style shared by many records
var index=C.map(function(c){return c.start;}), strides=[], n=1;
for(var k=C.length-1;k>=0;k--){strides[k]=n;n*=C[k].values.length;}
var canvas=root.querySelector('canvas'), ctx=canvas.getContext('2d'), still=root.querySelector('img');
var inputs=C.map(function(c,k){return root.querySelector('#'+root.id+'-'+k);});
var outputs=C.map(function(c,k){return root.querySelector('output[for="'+root.id+'-'+k+'"]');});
var play=root.querySelector('button'), panel=root.querySelector('.pe-controls');
var paths={}, bitmaps={count:0}, shapes={}, times=[], bg=new Image(), timer=null;
var CAP={projecting:'square',butt:'butt',round:'round'};
function state(){var s=0;for(var k=0;k<index.length;k++)s+=index[k]*strides[k];return s;}
function pairs(ref){var out=[],o=2*ref[0],x=0,y=0,fresh=true;for(var i=0;i<ref[1];i++){
  var dx=XY[o+2*i],dy=XY[o+2*i+1];if(dx===-32768){out.push(null);fresh=true;continue;}
  if(fresh){x=dx;y=dy;fresh=false;}else{x+=dx;y+=dy;}out.push([x/8,y/8]);}return out;}
function path(ref){return polyline(pairs(ref));}
function polyline(list){var p=new Path2D(),move=true;list.forEach(function(v){
  if(v===null){move=true;return;}if(move){p.moveTo(v[0],v[1]);move=false;}else p.lineTo(v[0],v[1]);});return p;}
function shape(k){if(!shapes[k]){var p=new Path2D();S.shapes[k][0].forEach(function(v){p.moveTo(v[0],v[1]);
  for(var i=2;i<v.length;i+=2)p.lineTo(v[i],v[i+1]);if(S.shapes[k][1])p.closePath();});shapes[k]=p;}return shapes[k];}
function mark(k,x,y,fill,edge,width){var p=shape(k);ctx.setTransform(1,0,0,1,x,y);
  if(fill){ctx.fillStyle=fill;ctx.fill(p);}if(edge&&width>0){ctx.strokeStyle=edge;ctx.lineWidth=width;ctx.stroke(p);}}
%(formulas)s
function args(a){var out={};for(var key in a)out[key]=(a[key]&&a[key].array!==undefined)?S.arrays[a[key].array]:a[key];
  return out;}
function toPx(v,ax){var f=ax[4]==='log'?Math.log10:function(t){return t;};
  return ax[0]+(f(v)-f(ax[2]))/(f(ax[3])-f(ax[2]))*(ax[1]-ax[0]);}
function curve(it){var r=FORMULAS[it.fn](args(it.args)),A=S.axes[it.ax],out=[];
  for(var i=0;i<r.x.length;i++){var X=toPx(r.x[i],A.x),Y=toPx(r.y[i],A.y);
    out.push(isFinite(X)&&isFinite(Y)?[Math.max(-4e3,Math.min(4e3,X)),Math.max(-4e3,Math.min(4e3,Y))]:null);}
  return out;}
function lutIndex(v,n,lo,hi){ // matplotlib's Normalize then Colormap: n colours, then under, over, bad
  if(v!==v)return n+2;var x=(v-lo)/(hi-lo)*n;if(x===n)x=n-1;return x<0?n:(x>=n?n+1:Math.floor(x));}
function bitmap(it,id){if(bitmaps[id])return bitmaps[id];if(++bitmaps.count>64){bitmaps={count:1};}
  var w=it.size[0],h=it.size[1],c=document.createElement('canvas');
  c.width=w;c.height=h;var g=c.getContext('2d'),d=g.createImageData(w,h),i,j,q;
  if(it.fn){var v=FORMULAS[it.fn](args(it.args)),L=S.luts[it.lut],r,col;
    for(r=0;r<h;r++)for(col=0;col<w;col++){i=r*w+col;
      q=4*lutIndex(v[(it.flip[0]?h-1-r:r)*w+(it.flip[1]?w-1-col:col)],L.n,it.range[0],it.range[1]);
      for(j=0;j<4;j++)d.data[4*i+j]=L.rgba[q+j];}
  }else{var o=it.pixels[0],pal=it.pal,wide=it.bpp===2?new Uint16Array(PX.buffer,o,w*h):null;
    for(i=0;i<w*h;i++){q=4*(wide?wide[i]:PX[o+i]);for(j=0;j<4;j++)d.data[4*i+j]=pal[q+j];}}
  g.putImageData(d,0,0);return bitmaps[id]=c;}
function paint(it,id){
  if(it.t==='none')return;
  ctx.save();
  if(it.clip){ctx.beginPath();ctx.rect(it.clip[0],it.clip[1],it.clip[2],it.clip[3]);ctx.clip();}
  if(it.t==='l'){
    if(it.fn||(it.p&&it.p[1])){var p=paths[id]||(paths[id]=it.fn?polyline(curve(it)):path(it.p));
      ctx.strokeStyle=it.c;ctx.lineWidth=it.w;
      ctx.setLineDash(it.d);ctx.lineDashOffset=it.o;ctx.lineCap=CAP[it.cap]||'butt';ctx.lineJoin=it.join;ctx.stroke(p);}
    if(it.m){ctx.setLineDash([]);pairs(it.mp).forEach(function(v){mark(it.m.s,v[0],v[1],it.m.f,it.m.e,it.m.w);});}
  }else if(it.t==='t'){
    ctx.font=it.f;ctx.fillStyle=it.c;ctx.textAlign=it.a;ctx.textBaseline='alphabetic';
    it.lines.forEach(function(l){ctx.fillText(l[0],l[1],l[2]);});
  }else if(it.t==='i'){
    ctx.imageSmoothingEnabled=it.smooth;ctx.drawImage(bitmap(it,id),it.rect[0],it.rect[1],it.rect[2],it.rect[3]);
  }else if(it.t==='p'){
    var q=paths[id]||(paths[id]=path(it.p));if(it.f){ctx.fillStyle=it.f;ctx.fill(q);}
    if(it.e&&it.w>0){ctx.strokeStyle=it.e;ctx.lineWidth=it.w;ctx.stroke(q);}
  }else if(it.t==='s'){
    pairs(it.mp).forEach(function(v,k){mark(it.sh[k],v[0],v[1],it.f[k],it.e[k],it.w);});
  }
  ctx.restore();
}
function draw(){
  var t0=performance.now(),row=state()*ROW;
  ctx.setTransform(1,0,0,1,0,0);ctx.clearRect(0,0,canvas.width,canvas.height);ctx.drawImage(bg,0,0);
  for(var a=0;a<S.artists;a++){var id=TABLE[row+a];paint(S.items[id],id);}
  canvas.setAttribute('aria-label',S.alts[TABLE[row+S.artists]].map(function(k){return S.sentences[k];}).join(' '));
  times.push(performance.now()-t0);
}
function show(k){var c=C[k];inputs[k].value=String(index[k]);outputs[k].textContent=c.shown[index[k]];
  if(c.kind==='range')inputs[k].setAttribute('aria-valuetext',c.shown[index[k]]);}
function set(k,i){index[k]=Math.max(0,Math.min(C[k].values.length-1,i|0));show(k);draw();}
function stop(){if(timer){clearInterval(timer);timer=null;play.textContent='Play';
  play.setAttribute('aria-pressed','false');}}
inputs.forEach(function(input,k){input.addEventListener(C[k].kind==='range'?'input':'change',function(){
  if(k===S.main)stop();set(k,+input.value);});});
play.addEventListener('click',function(){if(timer){stop();return;}var m=S.main,last=C[m].values.length-1;
  play.textContent='Pause';play.setAttribute('aria-pressed','true');if(index[m]>=last)set(m,0);
  timer=setInterval(function(){if(index[m]>=last){stop();return;}set(m,index[m]+1);},%(interval)d);});
root.posencExplorer={data:S,times:times,set:set,formulas:FORMULAS,index:function(){return index.slice();},
  drawn:function(){var row=state()*ROW,out=[];
  for(var a=0;a<S.artists;a++){var it=S.items[TABLE[row+a]],o={t:it.t,ax:it.ax,clip:it.clip};
    if(it.p)o.p=pairs(it.p);if(it.mp)o.mp=pairs(it.mp);if(it.lines)o.lines=it.lines.map(function(l){return l[0];});
    if(it.size&&!it.fn){o.size=it.size;o.rect=it.rect;o.pal=it.pal;o.bpp=it.bpp;
      o.pixels=Array.from(PX.subarray(it.pixels[0],it.pixels[0]+it.pixels[1]));}
    if(it.fn&&it.t==='i'){o.fn=it.fn;o.args=args(it.args);o.values=Array.from(FORMULAS[it.fn](o.args));}
    if(it.fn&&it.t==='l'){var r=FORMULAS[it.fn](args(it.args));o.fn=it.fn;o.args=args(it.args);o.p=curve(it);
      o.x=Array.from(r.x);o.y=Array.from(r.y);}
    out.push(o);}return out;}};
bg.onload=function(){C.forEach(function(c,k){show(k);});draw();canvas.hidden=false;still.hidden=true;panel.hidden=false;};
bg.src='data:image/png;base64,'+S.background;
})();
"""


def _control_html(element_id: str, k: int, control: dict) -> str:
    ident = f"{element_id}-{k}"
    label = f'<label for="{ident}">{html.escape(control["label"])}</label>'
    shown = html.escape(control["shown"][control["start"]])
    if control["kind"] == "select":
        options = "".join(
            f'<option value="{i}"{" selected" if i == control["start"] else ""}>{html.escape(text)}</option>'
            for i, text in enumerate(control["shown"])
        )
        return f'{label}<select id="{ident}">{options}</select><output for="{ident}" hidden>{shown}</output>'
    last = len(control["values"]) - 1
    return (
        f'{label}<input type="range" id="{ident}" min="0" max="{last}" step="1" value="{control["start"]}" '
        f'aria-valuetext="{shown}"><output for="{ident}" aria-live="polite">{shown}</output>'
    )


def explorer_html(data: dict, caption: str | None = None, interval_ms: int = 600) -> str:
    """The self-contained HTML of one explorer from :func:`~posenc.book.webfigure.figure_data`."""
    interval_ms = check_int("interval_ms", interval_ms, minimum=1)
    data = dict(data)
    still, alt = data.pop("still"), data.pop("still_alt")
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=True).replace("</", "<\\/")
    element_id = "posenc-explorer-" + hashlib.sha1(payload.encode()).hexdigest()[:10]  # deterministic
    main = data["controls"][data["main"]]["label"]
    controls = "".join(_control_html(element_id, k, c) for k, c in enumerate(data["controls"]))
    caption_html = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    script = _JS % {"id": json.dumps(element_id), "data": payload, "interval": interval_ms, "formulas": FORMULAS_JS}
    return (
        f"<style>{_CSS}</style>"
        f'<figure class="posenc-explorer" id="{element_id}">'
        f'<img src="data:image/png;base64,{base64.b64encode(still).decode("ascii")}" alt="{html.escape(alt)}" '
        f'width="{data["width"]}">'
        f'<canvas width="{data["width"]}" height="{data["height"]}" role="img" aria-label="{html.escape(alt)}" '
        f"hidden></canvas>"
        f'<div class="pe-controls" hidden><button type="button" aria-pressed="false" '
        f'title="Step through {html.escape(main)}">Play</button>{controls}</div>'
        f"{caption_html}</figure><script>{script}</script>"
    )
