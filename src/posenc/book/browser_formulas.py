"""Formulas the website's browser computes itself: a Python twin and a JavaScript port of each.

Most of an explorer's figure is shipped as data recorded at build time
(:mod:`posenc.book.webfigure`). Where that data would be too large (a 128 x 64 heat map in each
of two thousand states, a 2,049-point oscillating curve that does not simplify), a chapter
marks the artist with :func:`computed_in_browser`; the page ships the formula's arguments and
the browser computes the values with the port below. Each formula is checked three ways: its
Python twin against the artist's data at build time (to 1e-6), the twin against posenc in
``tests/test_widgets.py``, and the browser's values against posenc in
``tests/test_site_explorers.py`` (to 1e-6).
"""

from __future__ import annotations

import numpy as np

__all__ = ["computed_in_browser"]


def _sinusoidal_padded(n_positions, d_model, base, rows, cols):
    from .. import sinusoidal

    table = np.full((rows, cols), np.nan)
    table[:n_positions, :d_model] = sinusoidal(n_positions, d_model, base)
    return table


def _sinusoidal_similarity(n_positions, d_model, base):
    from .. import similarity, sinusoidal

    return similarity(sinusoidal(n_positions, d_model, base), normalize=True)


def _pairs(vector, layout: str):
    half = vector.size // 2
    if layout == "interleaved":
        return vector[0::2], vector[1::2]
    return vector[:half], vector[half:]


def _rope_scores(q, k, base, max_offset, layout="half", rotate_k_by=0, normalize=False):
    """``<R(m) q, k>`` for m = 0..max_offset (``posenc.rope_scores``), ``k`` first turned by ``rotate_k_by``
    positions; divided by ``|q| |k|`` if ``normalize``. Per pair: ``(q0 k0 + q1 k1) cos(m theta) +
    (q0 k1 - q1 k0) sin(m theta)``, ``theta_i = base**(-2i/d)``."""
    q, k = np.asarray(q, float), np.asarray(k, float)
    theta = base ** (-np.arange(0, q.size, 2) / q.size)
    k0, k1 = _pairs(k, layout)
    if rotate_k_by:
        turn = rotate_k_by * theta
        k0, k1 = k0 * np.cos(turn) - k1 * np.sin(turn), k0 * np.sin(turn) + k1 * np.cos(turn)
    q0, q1 = _pairs(q, layout)
    m = np.arange(max_offset + 1, dtype=float)
    y = np.cos(np.outer(m, theta)) @ (q0 * k0 + q1 * k1) + np.sin(np.outer(m, theta)) @ (q0 * k1 - q1 * k0)
    if normalize:
        y = y / (np.linalg.norm(q) * np.sqrt(np.sum(k0**2 + k1**2)))
    return m, y


def _rope_decay_bound(base, head_dim, max_offset, normalize=False):
    from .. import rope_decay_bound, rope_inv_freq

    m = np.arange(max_offset + 1, dtype=float)
    y = rope_decay_bound(m, rope_inv_freq(head_dim, base))
    return m, (y / y[0] if normalize else y)


# Records too many to ship for every state: the browser computes them with a few lines of
# JavaScript (FORMULAS_JS below), tested against posenc to 1e-6 in the browser test.
# Each is its Python twin: images return the array, lines (x, y).
BROWSER_FORMULAS = {
    "sinusoidal": _sinusoidal_padded,  # posenc.sinusoidal(n, d, base) in a NaN-padded rows x cols table
    "sinusoidal_similarity": _sinusoidal_similarity,  # posenc.similarity(posenc.sinusoidal(...), normalize=True)
    "rope_scores": _rope_scores,  # posenc.rope_scores(q, k, 0..max_offset, rope_inv_freq(d, base), layout)
    "rope_decay_bound": _rope_decay_bound,  # posenc.rope_decay_bound(0..max_offset, rope_inv_freq(d, base))
}
_ARRAY_DIGITS = 9  # arrays in a formula's arguments are shipped to 9 significant digits


def computed_in_browser(artist, formula: str, **arguments) -> None:
    """Mark ``artist`` (an image or a line) as computed on the website by the browser's port of ``formula``.

    Call it in ``update`` after setting the artist's data; the build checks that the formula with
    ``arguments`` gives that data (to 1e-6), and the page ships the arguments instead of the
    pixels or points. ``formula`` is a name in ``posenc.book.browser_formulas.BROWSER_FORMULAS``.
    """
    from .._validation import check_choice

    check_choice("formula", formula, BROWSER_FORMULAS)
    artist._posenc_formula = (formula, dict(arguments))


FORMULAS_JS = r"""
// Ports of posenc formulas for images too many to ship (posenc.book.webfigure.BROWSER_FORMULAS);
// the browser test compares them with posenc to 1e-6.
var FORMULAS={
  sinusoidal:function(a){ // posenc.sinusoidal(n, d, base): PE[p,2i]=sin(p b^(-2i/d)), PE[p,2i+1]=cos(...)
    var n=a.n_positions,d=a.d_model,cols=a.cols,out=new Float64Array(a.rows*cols).fill(NaN);
    for(var j=0;j<d;j++){var w=Math.pow(a.base,-2*(j>>1)/d);
      for(var p=0;p<n;p++)out[p*cols+j]=(j&1)?Math.cos(p*w):Math.sin(p*w);}
    return out;},
  sinusoidal_similarity:function(a){ // posenc.similarity(posenc.sinusoidal(n, d, base), normalize=True)
    var n=a.n_positions,d=a.d_model,t=FORMULAS.sinusoidal({n_positions:n,d_model:d,base:a.base,rows:n,cols:d});
    var out=new Float64Array(n*n),p,q,j,s;
    for(p=0;p<n;p++){s=0;for(j=0;j<d;j++)s+=t[p*d+j]*t[p*d+j];s=Math.sqrt(s);for(j=0;j<d;j++)t[p*d+j]/=s;}
    for(p=0;p<n;p++)for(q=0;q<n;q++){s=0;for(j=0;j<d;j++)s+=t[p*d+j]*t[q*d+j];out[p*n+q]=s;}
    return out;},
  rope_scores:function(a){ // posenc.rope_scores(q, k, 0..max_offset, rope_inv_freq(d, base), layout) [/ |q||k|]
    var q=a.q,k=a.k,d=q.length,h=d>>1,m,i,n=a.max_offset+1,x=new Float64Array(n),y=new Float64Array(n);
    var I=function(i){return a.layout==='interleaved'?[2*i,2*i+1]:[i,i+h];},c=new Float64Array(h),s=new Float64Array(h);
    var th=new Float64Array(h),nq=0,nk=0;
    for(i=0;i<h;i++){var j=I(i),k0=k[j[0]],k1=k[j[1]],t=Math.pow(a.base,-2*i/d);th[i]=t;
      if(a.rotate_k_by){var u=a.rotate_k_by*t,r0=k0*Math.cos(u)-k1*Math.sin(u);k1=k0*Math.sin(u)+k1*Math.cos(u);k0=r0;}
      c[i]=q[j[0]]*k0+q[j[1]]*k1;s[i]=q[j[0]]*k1-q[j[1]]*k0;nq+=q[j[0]]*q[j[0]]+q[j[1]]*q[j[1]];nk+=k0*k0+k1*k1;}
    var scale=a.normalize?1/Math.sqrt(nq*nk):1;
    for(m=0;m<n;m++){var v=0;for(i=0;i<h;i++)v+=c[i]*Math.cos(m*th[i])+s[i]*Math.sin(m*th[i]);x[m]=m;y[m]=v*scale;}
    return {x:x,y:y};},
  rope_decay_bound:function(a){ // posenc.rope_decay_bound(0..max_offset, rope_inv_freq(d, base)) [/ value at 0]
    var h=a.head_dim>>1,n=a.max_offset+1,x=new Float64Array(n),y=new Float64Array(n),th=new Float64Array(h),m,i;
    for(i=0;i<h;i++)th[i]=Math.pow(a.base,-2*i/a.head_dim);
    for(m=0;m<n;m++){var re=0,im=0,sum=0;for(i=0;i<h;i++){var u=m*th[i];
      re+=Math.cos(u);im+=Math.sin(u);sum+=Math.sqrt(re*re+im*im);}x[m]=m;y[m]=sum/h;}
    if(a.normalize){var y0=y[0];for(m=0;m<n;m++)y[m]/=y0;}
    return {x:x,y:y};}
};
"""
