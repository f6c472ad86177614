/* The explorers' canvas renderer (posenc.book.player, posenc.book.live).

   posencPainter(S, ctx) draws on the 2-D context ctx the moving artists recorded in S (the data of
   posenc.book.webfigure: figure_data for the website, live_frame for a kernel): S.table names, for
   each state, the record of every moving artist and the alt text. Records are drawn in the order
   update() returns them, over the background, as matplotlib blits them. Images and lines marked
   computed_in_browser are computed by posencFormulas (posenc-formulas.js).

   posencPlayer(id, S, interval) is the website's explorer: it redraws the explorer <figure id=id>
   on its canvas from S, a grid of every control's values. Every explorer's own inline script calls
   posencPlayer once; the chapter pages load this file (posenc.book.sphinxext), a notebook's output
   inlines it (posenc.book.player.player_code). In a live kernel, posenc-live.js draws each state
   the kernel records with the same painter. */
function posencPainter(S,ctx){
"use strict";
var FORMULAS=posencFormulas;
function bytes(s){var b=atob(s),a=new Uint8Array(b.length);for(var i=0;i<b.length;i++)a[i]=b.charCodeAt(i);return a;}
var XY=new Int16Array(bytes(S.xy).buffer), PX=bytes(S.px), T=bytes(S.table).buffer;
var TABLE=S.wide?new Uint32Array(T):new Uint16Array(T), ROW=S.artists+1;
var items=S.items.map(function(it){return Object.assign({},S.styles[it.s],it);}); // style shared by many records
var paths={}, bitmaps={count:0}, shapes={};
var CAP={projecting:'square',butt:'butt',round:'round'};
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
// draw state number s over the background image bg; returns its alt text
function draw(s,bg){
  var row=s*ROW;
  ctx.setTransform(1,0,0,1,0,0);ctx.clearRect(0,0,ctx.canvas.width,ctx.canvas.height);ctx.drawImage(bg,0,0);
  for(var a=0;a<S.artists;a++){var id=TABLE[row+a];paint(items[id],id);}
  return S.alts[TABLE[row+S.artists]].map(function(k){return S.sentences[k];}).join(' ');
}
// what state s draws, in canvas pixels and data (for tests: read back and compared with posenc)
function drawn(s){var row=s*ROW,out=[];
  for(var a=0;a<S.artists;a++){var it=items[TABLE[row+a]],o={t:it.t,ax:it.ax,clip:it.clip};
    if(it.p)o.p=pairs(it.p);if(it.mp)o.mp=pairs(it.mp);if(it.lines)o.lines=it.lines.map(function(l){return l[0];});
    if(it.size&&!it.fn){o.size=it.size;o.rect=it.rect;o.pal=it.pal;o.bpp=it.bpp;
      o.pixels=Array.from(PX.subarray(it.pixels[0],it.pixels[0]+it.pixels[1]));}
    if(it.fn&&it.t==='i'){o.fn=it.fn;o.args=args(it.args);o.values=Array.from(FORMULAS[it.fn](o.args));}
    if(it.fn&&it.t==='l'){var r=FORMULAS[it.fn](args(it.args));o.fn=it.fn;o.args=args(it.args);o.p=curve(it);
      o.x=Array.from(r.x);o.y=Array.from(r.y);}
    out.push(o);}return out;}
return {draw:draw,drawn:drawn,formulas:FORMULAS};
}
function posencPlayer(id,S,interval){
"use strict";
var root=document.getElementById(id), C=S.controls;
var canvas=root.querySelector('canvas'), ctx=canvas.getContext('2d'), still=root.querySelector('img');
var painter=posencPainter(S,ctx);
var index=C.map(function(c){return c.start;}), strides=[], n=1;
for(var k=C.length-1;k>=0;k--){strides[k]=n;n*=C[k].values.length;}
var inputs=C.map(function(c,k){return root.querySelector('#'+root.id+'-'+k);});
var outputs=C.map(function(c,k){return root.querySelector('output[for="'+root.id+'-'+k+'"]');});
var play=root.querySelector('button'), panel=root.querySelector('.pe-controls');
var times=[], bg=new Image(), timer=null;
function state(){var s=0;for(var k=0;k<index.length;k++)s+=index[k]*strides[k];return s;}
function draw(){
  var t0=performance.now();
  canvas.setAttribute('aria-label',painter.draw(state(),bg));
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
  timer=setInterval(function(){if(index[m]>=last){stop();return;}set(m,index[m]+1);},interval);});
root.posencExplorer={data:S,times:times,set:set,formulas:painter.formulas,index:function(){return index.slice();},
  drawn:function(){return painter.drawn(state());}};
bg.onload=function(){C.forEach(function(c,k){show(k);});draw();canvas.hidden=false;still.hidden=true;panel.hidden=false;};
bg.src='data:image/png;base64,'+S.background;
}
