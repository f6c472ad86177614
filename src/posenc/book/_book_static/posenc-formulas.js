/* Ports of posenc formulas for the records too many to ship, keyed by the names of
   posenc.book.browser_formulas.BROWSER_FORMULAS, where each one's Python twin and description live.
   Images return the values row by row (a Float64Array), lines {x, y}. The build checks each twin
   against posenc's data; tests/test_player_files.py runs these ports in node against the twins and
   tests/test_site_explorers.py compares the browser's values with posenc, both to 1e-6. */
var posencFormulas={
  sinusoidal:function(a){ // posenc.sinusoidal(n, d, base): PE[p,2i]=sin(p b^(-2i/d)), PE[p,2i+1]=cos(...)
    var n=a.n_positions,d=a.d_model,cols=a.cols,out=new Float64Array(a.rows*cols).fill(NaN);
    for(var j=0;j<d;j++){var w=Math.pow(a.base,-2*(j>>1)/d);
      for(var p=0;p<n;p++)out[p*cols+j]=(j&1)?Math.cos(p*w):Math.sin(p*w);}
    return out;},
  sinusoidal_similarity:function(a){ // posenc.similarity(posenc.sinusoidal(n, d, base), normalize=True)
    var n=a.n_positions,d=a.d_model,t=posencFormulas.sinusoidal({n_positions:n,d_model:d,base:a.base,rows:n,cols:d});
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
