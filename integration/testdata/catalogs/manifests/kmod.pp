kmod::blacklist { 'pcspkr': }
kmod::alias { 'pippet0': source => 'dummy' }
kmod::option { 'loop max_loop': module => 'loop', option => 'max_loop', value => '16' }
kmod::install { 'cramfs': command => '/bin/true' }
