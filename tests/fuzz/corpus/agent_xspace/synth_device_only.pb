
™/device:TPU:0/XLA Modules"€ä—Ð€Ð¬ó"€Üšý(€¨Ö¹"
train_step"	eval_step*device_type_string*
TPU v428"synth