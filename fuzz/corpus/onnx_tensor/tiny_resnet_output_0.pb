
BprobabilitiesJ(¶€³=žtï=V!·=ð!Ã=	+ñ=0Oá=çÝ>Éc =IÆÊ=Gg“=