
	/host:CPUmain"
" 	